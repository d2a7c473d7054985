#pragma once
// The fabricated values fake_nvml.cpp answers with, and the NVML tests expect.
namespace mmprof::test::fake_nvml {
inline constexpr const char* kName = "NVIDIA H200 (fake NVML)";
inline constexpr const char* kDriver = "570.86.15";
inline constexpr const char* kNvmlVersion = "12.570.86.15";
inline constexpr unsigned long long kMemoryTotal = 150'754'820'096ull;
inline constexpr unsigned long long kMemoryUsed = 3'221'225'472ull;
inline constexpr unsigned long long kProcessMemory = 805'306'368ull;
inline constexpr unsigned kSmUtil = 61, kMemoryBwUtil = 33, kDecoderUtil = 37, kJpegUtil = 12;
inline constexpr unsigned kNvdecEngines = 7, kNvjpgEngines = 7;
}  // namespace mmprof::test::fake_nvml
