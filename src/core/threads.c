/* SPDX-License-Identifier: BSD-3-Clause */
/* How many OpenMP threads the library's work takes.
 *
 * - The default team: GNU OpenMP starts with as many threads as the CPUs of
 *   the process's affinity mask (sched_getaffinity: omp_get_num_procs), but
 *   knows nothing of a cgroup CPU quota: 64 threads in a container shown 64
 *   CPUs with a quota of 8 spend the quota in the first eighth of each
 *   period and then all wait, the threads the others spin on among them.
 *   bsr_threads_default() lowers the team to the quota once, unless
 *   OMP_NUM_THREADS is set (the user's value always stands).
 * - A rank that shares its node with other ranks: by default every rank's
 *   team took every core (mpiexec -n 4 on a 64-core host: 4 x 64 threads on
 *   64 cores); src/mpi/dist.c applies bsr_threads_per_rank at
 *   bsr_dist_create.
 * - A setup loop's team (bsr_team): a loop of less than two grains of work
 *   runs on the calling thread, any larger one on the setup team of
 *   min(threads, BSR_TEAM_MAX), one size for every loop.
 * The rules are pure functions, tested without cgroups or MPI. */
#include "internal.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int bsr_threads_per_rank(int node_cores, int local_ranks, int avail, int user_set)
{
    if (user_set) return 0;
    if (local_ranks < 1) local_ranks = 1;
    int t = node_cores > 0 ? node_cores / local_ranks : (avail > 0 ? avail / local_ranks : 1);
    if (avail > 0 && t > avail) t = avail;
    return t > 1 ? t : 1;
}

int bsr_omp_threads_user_set(void)
{
    const char *e = getenv("OMP_NUM_THREADS");
    return e && *e;
}

int bsr_threads_default_rule(int avail, int quota_cpus, int user_set)
{
    if (user_set) return 0;
    int t = avail > 0 ? avail : 1;
    if (quota_cpus > 0 && quota_cpus < t) t = quota_cpus;
    return t;
}

int bsr_cpu_max_parse(const char *text)
{
    long long quota = 0, period = 0;
    if (!text) return 0;
    while (*text == ' ' || *text == '\t') text++;
    if (!strncmp(text, "max", 3)) return 0;
    if (sscanf(text, "%lld %lld", &quota, &period) != 2) return 0;
    return bsr_quota_cpus(quota, period);
}

int bsr_quota_cpus(long long quota_us, long long period_us)
{
    if (quota_us <= 0 || period_us <= 0) return 0;
    long long c = quota_us / period_us;   /* rounded down: a thread more than the quota gets throttled */
    if (c < 1) c = 1;
    return c > 1 << 20 ? 1 << 20 : (int)c;
}

/* The first line of file path into buf (size n); 0 when unreadable. */
static int read_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    return ok;
}

/* The smaller positive one of a and b (0: no limit). */
static int min_limit(int a, int b) { return a <= 0 ? b : b <= 0 ? a : a < b ? a : b; }

/* The quota of the cgroup v2 directory dir (under /sys/fs/cgroup) and of its
 * ancestors, the smallest; 0 when none. */
static int quota_v2(const char *dir)
{
    char path[512], line[128];
    int q = 0;
    snprintf(path, sizeof path, "/sys/fs/cgroup%s", dir);
    for (;;) {
        size_t len = strlen(path);
        if (len + sizeof "/cpu.max" <= sizeof path) {
            strcpy(path + len, "/cpu.max");
            if (read_line(path, line, sizeof line)) q = min_limit(q, bsr_cpu_max_parse(line));
            path[len] = 0;
        }
        char *slash = strrchr(path, '/');
        if (!slash || slash - path < (long)strlen("/sys/fs/cgroup")) break;
        *slash = 0;
    }
    return q;
}

/* The quota of a cgroup v1 cpu controller directory (cfs_quota_us, period). */
static int quota_v1(const char *root, const char *dir)
{
    char path[512], a[64], b[64];
    snprintf(path, sizeof path, "%s%s/cpu.cfs_quota_us", root, dir);
    if (!read_line(path, a, sizeof a)) return 0;
    snprintf(path, sizeof path, "%s%s/cpu.cfs_period_us", root, dir);
    if (!read_line(path, b, sizeof b)) return 0;
    return bsr_quota_cpus(atoll(a), atoll(b));
}

int bsr_cgroup_cpus(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return 0;
    char line[1024];
    int q = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        const char *dir = c2 + 1;
        if (!strcmp(dir, "/")) dir = "";
        *c2 = 0;
        const char *ctl = c1 + 1;
        if (!*ctl) {   /* v2: "0::/path" */
            q = min_limit(q, quota_v2(dir));
        } else {       /* v1: "N:cpu,cpuacct:/path" (the path may not be visible in a container: the mount's root too) */
            char list[256];
            snprintf(list, sizeof list, ",%s,", ctl);
            if (!strstr(list, ",cpu,")) continue;
            static const char *const roots[] = {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"};
            for (int r = 0; r < 2; r++) {
                q = min_limit(q, quota_v1(roots[r], dir));
                if (*dir) q = min_limit(q, quota_v1(roots[r], ""));
            }
        }
    }
    fclose(f);
    return q;
}

int bsr_cpus_available(void)
{
    int avail = 1;
#ifdef _OPENMP
    avail = omp_get_num_procs();   /* GNU OpenMP: the CPUs of the affinity mask */
#endif
    const int q = bsr_cgroup_cpus();
    return q > 0 && q < avail ? q : avail;
}

void bsr_threads_default(void)
{
#ifdef _OPENMP
    static atomic_int done;
    if (atomic_exchange(&done, 1)) return;
    int t = bsr_threads_default_rule(omp_get_num_procs(), bsr_cgroup_cpus(), bsr_omp_threads_user_set());
    if (t > 0 && t < omp_get_max_threads()) omp_set_num_threads(t);
#endif
}

static atomic_int team_forced;

void bsr_team_force(int on) { atomic_store(&team_forced, on != 0); }

int bsr_team_rule(int64_t work, int64_t grain, int team)
{
    if (grain < 1) grain = 1;
    return work / grain < 2 || team < 2 ? 1 : team;
}

int bsr_team_cap(const char *env)
{
    char *end = NULL;
    long v = env && *env ? strtol(env, &end, 10) : 0;
    return end && *end == 0 && v >= 1 && v <= 4096 ? (int)v : BSR_TEAM_MAX;
}

int bsr_team_size(void)
{
#ifdef _OPENMP
    static atomic_int cap;   /* BSR_TEAM_MAX from the environment, read once */
    int c = atomic_load_explicit(&cap, memory_order_relaxed);
    if (!c) atomic_store(&cap, c = bsr_team_cap(getenv("BSR_TEAM_MAX")));
    const int m = omp_get_max_threads();
    return m < c ? m : c;
#else
    return 1;
#endif
}

int bsr_team(int64_t work, int64_t grain)
{
    if (atomic_load_explicit(&team_forced, memory_order_relaxed)) grain = 1;
    return bsr_team_rule(work, grain, bsr_team_size());
}
