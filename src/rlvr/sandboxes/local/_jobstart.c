/* The first steps of a sandbox job's process, in C: `start_jobs` clones the zygote once
 * per job and, in each child, joins the job's cgroups and namespaces, sets its limits and
 * fds, then returns to Python (the job's index in the child). `drop` is the step the runner takes
 * later, once it knows which of its processes is which: the uid and the seccomp filter.
 *
 * Why C: each page a freshly forked Python process writes is a copy of the zygote's,
 * and the same steps done from Python (ctypes calls, os functions, the objects they
 * touch) cost a job about a tenth of its CPU. Here they touch the C stack and nothing
 * else. `rlvr.sandboxes.local.isolate.enter_job` is the same steps in Python, used when
 * this module is not built (it is an optional extension) and tested against it.
 *
 * Only for a single-threaded parent with no fork handlers (the zygote): the raw clone
 * skips glibc's fork bookkeeping and Python's before-fork hooks, as
 * `rlvr.sandboxes.local.linux.clone_fork` does.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/* The exit code of a job whose setup failed: the zygote's EXIT_INTERNAL. */
#define EXIT_SETUP 70
/* More than any caller passes: cgroup hierarchies, rlimit pairs, kept fds. */
#define MAX_INTS 32
/* Jobs one `start_jobs` call may start: more than a zygote has slots. */
#define MAX_JOBS 1024

typedef struct {
    int n;
    long v[MAX_INTS];
} Ints;

static int ints_from(PyObject *seq, Ints *out, const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (fast == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > MAX_INTS) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s: more than %d items", what, MAX_INTS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        out->v[i] = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (out->v[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
    }
    out->n = (int)n;
    Py_DECREF(fast);
    return 0;
}

/* In the child, before any of the program runs: say which step failed on the job's
 * stderr (the client keeps it) and exit. */
static void fail(int err_fd, const char *step) {
    char message[200];
    int len = snprintf(message, sizeof message, "sandbox job setup failed: %s: %s\n", step, strerror(errno));
    if (len > 0) (void)!write(err_fd, message, (size_t)len);
    _exit(EXIT_SETUP);
}

typedef struct {
    Ints cgroup_procs; /* cgroup.procs files of the slot, one per hierarchy */
    int cgroup_ns;     /* then a cgroup namespace rooted there */
    int new_session;   /* setsid: without a PID namespace, the job's group is killed */
    int proc_fd;       /* a writable /proc, or -1 for /proc */
    const char *oom_score_adj;
    Py_ssize_t oom_len;
    int net_fd, mnt_fd; /* namespaces to join, or -1 */
    Ints rlimits;       /* (resource, value) pairs, flat */
    int channel, out, err;
    Ints keep; /* fds the job keeps, ascending (0-3 and any above) */
} Setup;

static void set_up_child(const Setup *s) {
    for (int i = 0; i < s->cgroup_procs.n; i++)
        if (write((int)s->cgroup_procs.v[i], "0", 1) != 1) fail(s->err, "joining the slot's cgroup");
    if (s->cgroup_ns && unshare(CLONE_NEWCGROUP) != 0) fail(s->err, "unshare(CLONE_NEWCGROUP)");
    if (s->new_session && setsid() < 0) fail(s->err, "setsid");
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) fail(s->err, "PR_SET_PDEATHSIG");
    int oom = s->proc_fd >= 0 ? openat(s->proc_fd, "self/oom_score_adj", O_WRONLY | O_CLOEXEC)
                              : open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (oom >= 0) { /* best effort, as in isolate.set_oom_score_adj */
        (void)!write(oom, s->oom_score_adj, (size_t)s->oom_len);
        close(oom);
    }
    if (s->net_fd >= 0 && setns(s->net_fd, CLONE_NEWNET) != 0) fail(s->err, "setns(net)");
    if (s->mnt_fd >= 0 && setns(s->mnt_fd, CLONE_NEWNS) != 0) fail(s->err, "setns(mnt)");
    if (chdir("/tmp") != 0) fail(s->err, "chdir(/tmp)");
    for (int i = 0; i + 1 < s->rlimits.n; i += 2) {
        struct rlimit limit = {(rlim_t)s->rlimits.v[i + 1], (rlim_t)s->rlimits.v[i + 1]};
        (void)setrlimit((int)s->rlimits.v[i], &limit); /* best effort, as in isolate.set_rlimits */
    }
    /* The channel is the job's input (fd 0, until the runner detaches it) and its
     * record output (fd 3). The received fds are all above 2. */
    if (dup2(s->channel, 0) < 0 || dup2(s->out, 1) < 0 || dup2(s->err, 2) < 0 || dup2(s->channel, 3) < 0)
        fail(s->err, "dup2");
    long next = 0;
    for (int i = 0; i < s->keep.n; i++) {
        if (s->keep.v[i] > next) syscall(SYS_close_range, (unsigned)next, (unsigned)(s->keep.v[i] - 1), 0);
        next = s->keep.v[i] + 1;
    }
    syscall(SYS_close_range, (unsigned)next, ~0U, 0);
}

/* One job's arguments (all but the clone flags) into `s`. The bytes `oom_score_adj` points
 * into stay alive with the caller's job tuples, past the clones. */
static int setup_from(PyObject *job, Setup *s) {
    PyObject *procs, *rlimits, *keep;
    if (!PyTuple_Check(job)) {
        PyErr_Format(PyExc_TypeError, "a job is a tuple, not %.50s", Py_TYPE(job)->tp_name);
        return -1;
    }
    if (!PyArg_ParseTuple(job, "Oppiy#iiO(iii)O:start_jobs", &procs, &s->cgroup_ns, &s->new_session, &s->proc_fd,
                          &s->oom_score_adj, &s->oom_len, &s->net_fd, &s->mnt_fd, &rlimits, &s->channel, &s->out,
                          &s->err, &keep))
        return -1;
    if (ints_from(procs, &s->cgroup_procs, "cgroup procs") || ints_from(rlimits, &s->rlimits, "rlimits") ||
        ints_from(keep, &s->keep, "keep"))
        return -1;
    return 0;
}

/* Every job's arguments are read before the first clone, and the clones follow back to
 * back: between two of them the parent writes its stack and `started`, and no Python
 * object. Each page the parent writes after a fork is a copy while the child lives, so
 * a loop over the jobs in Python (its frames, the reference counts of what it touches)
 * cost the zygote some 40 copied pages per job. */
static PyObject *start_jobs(PyObject *module, PyObject *args) {
    (void)module;
    unsigned long flags;
    PyObject *jobs;
    if (!PyArg_ParseTuple(args, "kO:start_jobs", &flags, &jobs)) return NULL;
    PyObject *fast = PySequence_Fast(jobs, "jobs");
    if (fast == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > MAX_JOBS) {
        Py_DECREF(fast);
        return PyErr_Format(PyExc_ValueError, "jobs: more than %d", MAX_JOBS);
    }
    long started[MAX_JOBS][2]; /* on the stack, which each clone's return writes anyway */
    Setup *setups = calloc((size_t)(n > 0 ? n : 1), sizeof(Setup));
    PyObject *result = NULL;
    if (setups == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (setup_from(PySequence_Fast_GET_ITEM(fast, i), &setups[i])) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        int pidfd = -1;
        long pid = syscall(SYS_clone, flags | CLONE_PIDFD | SIGCHLD, 0, &pidfd, 0, 0);
        if (pid < 0 && errno == EINVAL) /* a kernel before 5.2: the zygote polls instead */
            pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
        if (pid == 0) {
            set_up_child(&setups[i]);
            PyOS_AfterFork_Child();
            /* `setups` and `fast` are left to the child's exit: freeing them here would
             * write (and so copy) heap pages for nothing. */
            return PyLong_FromSsize_t(i);
        }
        started[i][0] = pid > 0 ? pid : -1;
        started[i][1] = pid > 0 ? pidfd : errno;
    }
    result = PyList_New(n);
    for (Py_ssize_t i = 0; result != NULL && i < n; i++) {
        PyObject *item = Py_BuildValue("(ll)", started[i][0], started[i][1]);
        if (item == NULL) Py_CLEAR(result);
        else PyList_SET_ITEM(result, i, item);
    }
done:
    free(setups);
    Py_DECREF(fast);
    return result;
}

/* isolate.drop's steps: become `uid` (group too, no supplementary groups), optionally
 * not dumpable, then install the seccomp filter at `filter` (a struct sock_fprog's
 * address; 0: none). OSError naming the step if one fails. */
static PyObject *drop(PyObject *module, PyObject *args) {
    (void)module;
    unsigned int uid;
    int dumpable;
    unsigned long long filter;
    if (!PyArg_ParseTuple(args, "IpK:drop", &uid, &dumpable, &filter)) return NULL;
    const char *step = NULL;
    if (setgroups(0, NULL) != 0)
        step = "setgroups";
    else if (setresgid(uid, uid, uid) != 0)
        step = "setresgid";
    else if (setresuid(uid, uid, uid) != 0)
        step = "setresuid";
    else if (!dumpable && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        step = "PR_SET_DUMPABLE";
    else if (filter && prctl(PR_SET_SECCOMP, 2 /* SECCOMP_MODE_FILTER */, (unsigned long)filter, 0, 0) != 0)
        step = "PR_SET_SECCOMP";
    if (step != NULL) return PyErr_Format(PyExc_OSError, "%s: %s", step, strerror(errno));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"start_jobs", start_jobs, METH_VARARGS,
     "start_jobs(flags, jobs) -> list[(pid, pidfd)] | int\n\n"
     "Clone one process per job with `flags` (namespaces), back to back, and set each up. A job is "
     "(cgroup_procs, cgroup_ns, new_session, proc_fd, oom_score_adj, net_fd, mnt_fd, rlimits, "
     "(channel, stdout, stderr), keep). In a child: the index of its job. In the parent: per job, "
     "(pid, pidfd or -1), or (-1, errno) if its clone failed."},
    {"drop", drop, METH_VARARGS,
     "drop(uid, dumpable, filter)\n\nBecome uid for good (and not dumpable unless `dumpable`), then install "
     "the seccomp filter whose struct sock_fprog is at address `filter` (0: none)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_jobstart", "A sandbox job's first steps, in C.", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__jobstart(void) { return PyModule_Create(&module_def); }
