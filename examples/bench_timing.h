// Timing for the per-call programs bench/calls.py runs (examples/empty_kernel.cu,
// bench/calls_paths.cu): each prints "NAME MICROSECONDS" lines.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>

static double now_us()
{
    return std::chrono::duration<double, std::micro>(
        std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Microseconds per call of `n` calls of the statement(s), printed as "NAME MICROSECONDS".
#define TIME(name, n, ...)                                               \
    do {                                                                 \
        double t0_ = now_us();                                           \
        for (long i_ = 0; i_ < (n); i_++) { __VA_ARGS__; }                \
        printf("%s %.3f\n", name, (now_us() - t0_) / (n));               \
    } while (0)

// A copy's time: the median of TRIALS trials, each repeating it for at least TRIAL_US and at least
// `least` times: the method bench/calls.py uses for its raw-socket reference, so that one slow
// spell of this shared machine does not decide a row.
enum { TRIALS = 3 };
static const double TRIAL_US = 50e3;

template <class F> static double median_us(F once, int least)
{
    double per_call[TRIALS];
    for (int t = 0; t < TRIALS; t++) {
        long k = 0;
        double t0 = now_us(), t1;
        do {
            once();
            k++;
            t1 = now_us();
        } while (k < least || t1 - t0 < TRIAL_US);
        per_call[t] = (t1 - t0) / k;
    }
    std::sort(per_call, per_call + TRIALS);
    return per_call[TRIALS / 2];
}

// An asynchronous call's issue time: the median over TRIALS batches of `n` calls, each batch timed
// without the wait that follows it (`wait`, untimed, lets the queued work finish).
template <class F, class W> static double issue_median_us(F once, W wait, long n)
{
    double per_call[TRIALS];
    for (int t = 0; t < TRIALS; t++) {
        double t0 = now_us();
        for (long i = 0; i < n; i++)
            once();
        per_call[t] = (now_us() - t0) / n;
        wait();
    }
    std::sort(per_call, per_call + TRIALS);
    return per_call[TRIALS / 2];
}
