#include "CProcessControl.h"

#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int pc_unblock_all_signals(void) {
    sigset_t none;
    sigemptyset(&none);
    return sigprocmask(SIG_SETMASK, &none, NULL);
}

/// The parent when pc_signal_when_parent_dies was called, and the signal to end with once it is gone.
static volatile pid_t pc_parent;
static volatile int pc_signal;

/// Ends the process with pc_signal's default action.
static void pc_die(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    sigaction(pc_signal, &action, NULL);
    kill(getpid(), pc_signal);
}

/// SIGUSR2 from the kernel: the thread that started us ended. Only async-signal-safe calls here.
static void pc_parent_thread_ended(int notice) {
    (void)notice;
    if (getppid() != pc_parent) pc_die();
    // Else another thread of the parent process adopted us: the parent lives on.
}

int pc_signal_when_parent_dies(int signal) {
    pc_parent = getppid();
    pc_signal = signal;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = pc_parent_thread_ended;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGUSR2, &action, NULL) != 0) return -1;
    if (prctl(PR_SET_PDEATHSIG, SIGUSR2, 0, 0, 0) != 0) return -1;
    // The parent may have died between getppid() and prctl(): then no SIGUSR2 comes.
    if (getppid() != pc_parent) pc_die();
    return 0;
}
