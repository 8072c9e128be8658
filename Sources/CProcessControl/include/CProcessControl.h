// Process controls that Swift's Glibc module does not import (sys/prctl.h) or that are best done in C
// (a signal handler).
#ifndef STOREFRONT_CPROCESSCONTROL_H
#define STOREFRONT_CPROCESSCONTROL_H

/// Unblocks every signal in the calling thread (sigprocmask SIG_SETMASK with an empty set).
///
/// A process inherits the signal mask of the thread that spawned it; a client spawning from a thread
/// that blocks signals (libdispatch's worker threads block nearly all) would otherwise leave SIGTERM
/// blocked, so that neither `kill` nor the parent-death signal could end the server.
/// Returns 0 on success, -1 with errno set otherwise.
int pc_unblock_all_signals(void);

/// Sends `signal` to this process when its parent process exits.
///
/// The kernel's PR_SET_PDEATHSIG fires when the parent *thread* exits, also while the parent process
/// lives on, so the kernel is asked for SIGUSR2 instead, and a handler sends `signal` only when the
/// parent process has changed (getppid() differs from the one at this call), that is when the parent
/// has died and this process was re-parented. A parent that died before this call is not detected.
/// Returns 0 on success, -1 with errno set otherwise.
int pc_signal_when_parent_dies(int signal);

#endif
