// Process controls that Swift's Glibc module does not import (sys/prctl.h).
#ifndef STOREFRONT_CPROCESSCONTROL_H
#define STOREFRONT_CPROCESSCONTROL_H

/// Asks the kernel to send `signal` to this process when its parent exits (prctl PR_SET_PDEATHSIG).
/// Returns 0 on success, -1 with errno set otherwise.
int pc_signal_when_parent_dies(int signal);

/// Unblocks every signal in the calling thread (sigprocmask SIG_SETMASK with an empty set).
///
/// A process inherits the signal mask of the thread that spawned it; a client spawning from a thread
/// that blocks signals (libdispatch's worker threads block nearly all) would otherwise leave SIGTERM
/// blocked, so that neither `kill` nor the parent-death signal could end the server.
/// Returns 0 on success, -1 with errno set otherwise.
int pc_unblock_all_signals(void);

#endif
