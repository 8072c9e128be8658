#include "CMainQueue.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <unistd.h>

// libdispatch's private interface for run loops (dispatch_runloop_handle_t is an int on Linux).
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *message);
// Its public interface, declared here as the headers are not on this module's path: the main queue is the
// object `dispatch_get_main_queue()` returns the address of.
extern struct dispatch_queue_s _dispatch_main_q;
extern void dispatch_async_f(struct dispatch_queue_s *queue, void *context, void (*work)(void *));

/// One job of the taken-over queue.
typedef struct {
    void *context;
    void (*work)(void *);
} cmq_job;

/// The taken-over queue: a ring of jobs, and how the loop is woken. Every field is guarded by `lock`.
static struct {
    pthread_mutex_t lock;
    bool taken_over;
    cmq_job *jobs;
    size_t capacity;
    size_t first;
    size_t count;
    int descriptor;
    /// The loop is in (or about to enter) `poll`: a job queued must make the descriptor readable.
    bool sleeping;
    /// The descriptor was written since the loop last woke.
    bool signaled;
} taken = {.lock = PTHREAD_MUTEX_INITIALIZER, .descriptor = -1};

int cmq_main_queue_fd(void) { return _dispatch_get_main_queue_handle_4CF(); }

void cmq_drain_main_queue(void) {
    uint64_t count;
    // The eventfd is nonblocking: this read only resets its counter, if set.
    ssize_t ignored = read(_dispatch_get_main_queue_handle_4CF(), &count, sizeof count);
    (void)ignored;
    _dispatch_main_queue_callback_4CF(0);
    cmq_run_jobs();
}

/// Appends a job to the ring (the lock held), doubling it when full. Out of memory, it aborts: a job sent
/// elsewhere would run before those queued.
static void push(cmq_job job) {
    if (taken.count == taken.capacity) {
        size_t capacity = taken.capacity ? taken.capacity * 2 : 256;
        cmq_job *jobs = malloc(capacity * sizeof *jobs);
        if (!jobs) {
            static const char message[] = "CMainQueue: out of memory for the main thread's jobs\n";
            ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
            (void)ignored;
            abort();
        }
        for (size_t index = 0; index < taken.count; index++) {
            jobs[index] = taken.jobs[(taken.first + index) % taken.capacity];
        }
        free(taken.jobs);
        taken.jobs = jobs;
        taken.capacity = capacity;
        taken.first = 0;
    }
    taken.jobs[(taken.first + taken.count) % taken.capacity] = job;
    taken.count += 1;
}

/// Takes the first job from the ring (the lock held, a job queued).
static cmq_job pop(void) {
    cmq_job job = taken.jobs[taken.first];
    taken.first = (taken.first + 1) % taken.capacity;
    taken.count -= 1;
    return job;
}

/// Sets the timer `descriptor` to expire in `nanoseconds` (0: at once), replacing its last setting; a negative
/// value disarms it.
static void expire_in(int descriptor, long long nanoseconds) {
    struct itimerspec setting = {0};
    if (nanoseconds >= 0) {
        if (nanoseconds == 0) nanoseconds = 1;  // a zero setting would disarm it
        setting.it_value.tv_sec = (time_t)(nanoseconds / 1000000000LL);
        setting.it_value.tv_nsec = (long)(nanoseconds % 1000000000LL);
    }
    timerfd_settime(descriptor, 0, &setting, NULL);
}

void cmq_async_main(void *context, void (*work)(void *)) {
    pthread_mutex_lock(&taken.lock);
    if (!taken.taken_over) {
        pthread_mutex_unlock(&taken.lock);
        dispatch_async_f(&_dispatch_main_q, context, work);
        return;
    }
    push((cmq_job){context, work});
    bool wake = taken.sleeping && !taken.signaled;
    if (wake) taken.signaled = true;
    int descriptor = taken.descriptor;
    pthread_mutex_unlock(&taken.lock);
    if (wake) {
        // Due at once. Set after the lock, it may land after the loop woke for something else and armed its
        // own deadline: the descriptor is then readable early, and the loop, which runs the queued jobs at
        // every wake anyway, arms its deadline again.
        expire_in(descriptor, 0);
    }
}

int cmq_take_over_jobs(void) {
    pthread_mutex_lock(&taken.lock);
    if (taken.descriptor < 0) taken.descriptor = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    taken.taken_over = taken.descriptor >= 0;
    int descriptor = taken.descriptor;
    pthread_mutex_unlock(&taken.lock);
    return descriptor;
}

void cmq_give_back_jobs(void) {
    pthread_mutex_lock(&taken.lock);
    taken.taken_over = false;
    while (taken.count > 0) {
        cmq_job job = pop();
        dispatch_async_f(&_dispatch_main_q, job.context, job.work);
    }
    pthread_mutex_unlock(&taken.lock);
}

bool cmq_jobs_queued(void) {
    pthread_mutex_lock(&taken.lock);
    bool queued = taken.count > 0;
    pthread_mutex_unlock(&taken.lock);
    return queued;
}

bool cmq_run_jobs(void) {
    pthread_mutex_lock(&taken.lock);
    size_t due = taken.count;
    pthread_mutex_unlock(&taken.lock);
    for (size_t ran = 0; ran < due; ran++) {
        pthread_mutex_lock(&taken.lock);
        // Fewer when a job ran the queue itself, or gave it back.
        if (taken.count == 0) {
            pthread_mutex_unlock(&taken.lock);
            break;
        }
        cmq_job job = pop();
        pthread_mutex_unlock(&taken.lock);
        job.work(job.context);
    }
    return cmq_jobs_queued();
}

bool cmq_will_sleep(void) {
    pthread_mutex_lock(&taken.lock);
    bool sleeps = taken.count == 0;
    taken.sleeping = sleeps;
    pthread_mutex_unlock(&taken.lock);
    return sleeps;
}

void cmq_woke(bool descriptor_ready) {
    pthread_mutex_lock(&taken.lock);
    taken.sleeping = false;
    taken.signaled = false;
    int descriptor = taken.descriptor;
    pthread_mutex_unlock(&taken.lock);
    if (descriptor_ready) {
        // Nonblocking: resets the counter. A job queued between the wake and this read may have written it
        // after: the next poll then returns at once, and this read clears it.
        uint64_t count;
        ssize_t ignored = read(descriptor, &count, sizeof count);
        (void)ignored;
    }
}

void cmq_arm_wake(long long nanoseconds) {
    pthread_mutex_lock(&taken.lock);
    int descriptor = taken.descriptor;
    pthread_mutex_unlock(&taken.lock);
    if (descriptor >= 0) expire_in(descriptor, nanoseconds);
}
