// Stands in for a CUDA process under CUDA_INJECTION64_PATH (tests only): loads the injection
// library named by argv[1] and calls InitializeInjection as the CUDA driver does during cuInit,
// forks a child that exits at once (it must not write the events file), then exits normally so
// the library's atexit handler writes the events.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: inject_driver LIBRARY\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "inject_driver: %s\n", dlerror());
    return 3;
  }
  auto init = reinterpret_cast<int (*)()>(dlsym(lib, "InitializeInjection"));
  if (!init) {
    std::fprintf(stderr, "inject_driver: no InitializeInjection in %s\n", argv[1]);
    return 3;
  }
  if (init() != 1) return 4;
  const pid_t child = fork();
  if (child == 0) std::exit(0);  // runs the inherited atexit handlers
  int status = 0;
  waitpid(child, &status, 0);
  return 0;
}
