#pragma once
// Ctrl-C: the first SIGINT/SIGTERM sets a flag that long loops check, so a run stops between
// batches and keeps what it measured; a second one ends the process at once.
namespace mmprof {

void install_interrupt_handler() noexcept;
bool interrupted() noexcept;
// Throws Error(ExitCode::interrupted) when the flag is set.
void throw_if_interrupted();

}  // namespace mmprof
