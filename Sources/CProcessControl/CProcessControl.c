#include "CProcessControl.h"

#include <sys/prctl.h>

int pc_signal_when_parent_dies(int signal) { return prctl(PR_SET_PDEATHSIG, signal, 0, 0, 0); }
