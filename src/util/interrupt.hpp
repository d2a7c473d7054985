#pragma once
// Ctrl-C: the first SIGINT/SIGTERM sets a flag that long loops check, so a run stops between
// batches and keeps what it measured; a second one ends the process at once, or, in a process
// that supervises children (`ab`'s trials), within kSecondSignalGraceS, in which its loop ends
// them and records what it holds.
#include <sys/types.h>

namespace mmprof {

// The environment variable naming the pid of the process a child must not outlive.
inline constexpr const char* kDieWithEnv = "MMPROF_DIE_WITH";
inline constexpr unsigned kSecondSignalGraceS = 2;

// Installs the handler; a process started with kDieWithEnv set to its parent's pid also gets
// SIGTERM (its first interrupt) when that parent dies, even by SIGKILL (PR_SET_PDEATHSIG).
void install_interrupt_handler() noexcept;
// From now on a second signal does not end the process at once: interrupted_again() turns true
// and the process ends by itself kSecondSignalGraceS later unless it exits first.
void supervise_children() noexcept;
bool interrupted() noexcept;
bool interrupted_again() noexcept;
// Throws Error(ExitCode::interrupted) when the flag is set.
void throw_if_interrupted();

}  // namespace mmprof
