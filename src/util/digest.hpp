#pragma once
// A fast 64-bit content digest for batch comparison across runs and A/B arms. Not cryptographic:
// it detects differing tensors, it does not resist crafted collisions.
#include <cstddef>
#include <cstdint>

namespace mmprof {

uint64_t digest64(const void* data, size_t bytes, uint64_t seed = 0) noexcept;
// Order-dependent combination of digests (batch digest = combine over its samples in order).
uint64_t digest_combine(uint64_t a, uint64_t b) noexcept;

}  // namespace mmprof
