/* The pod sandbox's process (registry.k8s.io/pause): sleeps until SIGTERM or SIGINT, reaps children. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void quit(int sig) { (void)sig; _exit(0); }
static void reap(int sig) { (void)sig; while (waitpid(-1, NULL, WNOHANG) > 0) {} }

int main(void) {
  signal(SIGTERM, quit);
  signal(SIGINT, quit);
  signal(SIGCHLD, reap);
  for (;;) pause();
}
