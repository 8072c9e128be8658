// The main thread's work as file descriptors, so that a poll() loop on the main thread can serve both stdin
// and the main actor.
//
// Two queues feed it. The main dispatch queue (the main actor's own jobs, `DispatchQueue.main`): its
// descriptor and drain are the entry points CoreFoundation's run loop uses, which libdispatch exports on
// Linux. And the jobs queued with `cmq_async_main` (the main-queue task executor's, the group commit's):
// while a loop has taken them over (`cmq_take_over_jobs`), they wait in a queue of this module, which the
// loop runs between its polls without a system call per job; otherwise they go to the main dispatch queue.
//
// Why: libdispatch writes its eventfd for almost every job queued on the main queue, even from the main
// thread while it drains, and each drain is a poll, a read and a callback: ~15 writes, 6 reads and 6
// polls per durable cart change (issue 16, round 11).
#ifndef STOREFRONT_CMAINQUEUE_H
#define STOREFRONT_CMAINQUEUE_H

#include <stdbool.h>

/// A descriptor (an eventfd on Linux) that becomes readable when the main dispatch queue has work.
/// Call on the main thread.
int cmq_main_queue_fd(void);

/// Runs the jobs queued on the main dispatch queue (clearing its descriptor's readiness), then the jobs
/// queued with `cmq_async_main` by then (not those they queue). Call on the main thread.
void cmq_drain_main_queue(void);

/// Queues `work(context)` to run on the main thread: in the taken-over queue while a loop has taken it
/// over, else on the main dispatch queue (`dispatch_async_f`: no block is made for it). Jobs run in the
/// order they were queued. Any thread.
void cmq_async_main(void *context, void (*work)(void *));

/// From now on, jobs queued with `cmq_async_main` wait for `cmq_run_jobs` (the caller runs them) instead
/// of going to the main dispatch queue (those already there stay, and may run after later ones). Returns a
/// descriptor (a timerfd) that a job queued while the loop sleeps (`cmq_will_sleep`) makes readable (by
/// arming it to expire at once), as does the loop's own next deadline (`cmq_arm_wake`): one descriptor for
/// both, so that a `poll` watches no more descriptors for the loop's timers. Call on the main thread; a
/// second call does nothing more.
int cmq_take_over_jobs(void);

/// Gives the jobs back to the main dispatch queue: those queued are moved to it in order, and later ones
/// go to it directly. Call on the main thread, when the loop that took them over ends.
void cmq_give_back_jobs(void);

/// Whether jobs wait in the taken-over queue.
bool cmq_jobs_queued(void);

/// Runs the jobs in the taken-over queue when it is called (not those they queue), in order. Returns
/// whether jobs are queued after them. Call on the main thread.
bool cmq_run_jobs(void);

/// Before the loop blocks in `poll`: returns false (do not block) when jobs are queued; otherwise the next
/// job queued makes the descriptor readable, until `cmq_woke`.
bool cmq_will_sleep(void);

/// After the loop's `poll`: jobs queued from now on make no descriptor readable (the loop runs them);
/// `descriptor_ready` says whether the descriptor was readable, which this clears.
void cmq_woke(bool descriptor_ready);

/// Makes the taken-over queue's descriptor readable in `nanoseconds` (0: at once) if no job does so first,
/// replacing the last deadline set; a negative value removes it. For the loop's own deadlines (the sleeps it
/// fires): call on the loop's thread before `cmq_will_sleep`, never between it and `cmq_woke`, or a job's
/// wake could be replaced. After the descriptor was readable, no deadline is set any more.
void cmq_arm_wake(long long nanoseconds);

#endif
