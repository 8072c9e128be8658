#include "CProcessControl.h"

#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>

int pc_signal_when_parent_dies(int signal) { return prctl(PR_SET_PDEATHSIG, signal, 0, 0, 0); }

int pc_unblock_all_signals(void) {
    sigset_t none;
    sigemptyset(&none);
    return sigprocmask(SIG_SETMASK, &none, NULL);
}
