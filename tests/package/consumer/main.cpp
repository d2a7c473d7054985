// Reads a run directory through the installed public headers: consumer RUN_DIR prints the number
// of steps, the steps of each phase and the summary's status; mmprof's errors exit with their code.
#include <exception>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "mmprof/error.hpp"
#include "mmprof/run_dir.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer RUN_DIR\n";
    return 2;
  }
  try {
    const mmprof::RunDir run = mmprof::RunDir::open(argv[1]);
    const std::vector<mmprof::StepRow> steps = run.steps();
    std::map<std::string, int> per_phase;
    for (const mmprof::StepRow& step : steps)
      ++per_phase[step.phase];
    std::cout << "steps " << steps.size() << "\n";
    for (const auto& [phase, n] : per_phase)
      std::cout << "phase " << phase << " " << n << "\n";
    std::cout << "status " << run.summary().status << "\n";
  } catch (const mmprof::Error& e) {
    std::cerr << "consumer: " << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::cerr << "consumer: unexpected: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
