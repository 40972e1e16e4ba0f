// The pod sandbox's process (the "pause" container): it holds the pod's namespaces open, reaps
// the zombies of processes that share its PID namespace, and exits on SIGTERM/SIGINT. Built static
// so the image needs nothing but this file; no registry serves the upstream pause image here.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int signal_number) {
    (void)signal_number;
    _exit(0);
}

static void on_child(int signal_number) {
    (void)signal_number;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

int main(void) {
    struct sigaction stop = {.sa_handler = on_stop};
    struct sigaction child = {.sa_handler = on_child, .sa_flags = SA_NOCLDSTOP};
    sigaction(SIGINT, &stop, NULL);
    sigaction(SIGTERM, &stop, NULL);
    sigaction(SIGCHLD, &child, NULL);
    for (;;)
        pause();
    return 0;
}
