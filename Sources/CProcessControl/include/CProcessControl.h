// Process controls that Swift's Glibc module does not import (sys/prctl.h).
#ifndef STOREFRONT_CPROCESSCONTROL_H
#define STOREFRONT_CPROCESSCONTROL_H

/// Asks the kernel to send `signal` to this process when its parent exits (prctl PR_SET_PDEATHSIG).
/// Returns 0 on success, -1 with errno set otherwise.
int pc_signal_when_parent_dies(int signal);

#endif
