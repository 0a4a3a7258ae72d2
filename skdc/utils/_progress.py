"""A progress bar for long loops, shown only where someone is watching, and the progress of
a run of several stages of draws (an audit, a comparison): draws done out of draws planned,
the time spent and an estimate, as a bar on a terminal or as lines in a log file."""

# Licence: BSD 3 clause

import contextvars
import sys
import time

__all__ = ["RunProgress", "clock", "progress_bar", "run_progress", "stage_progress"]


def progress_bar(iterable, progress="auto", **tqdm_kwargs):
    """Wrap ``iterable`` in a tqdm bar when ``progress`` asks for one.

    Parameters
    ----------
    iterable : iterable
        What the loop runs over.
    progress : bool or "auto", default="auto"
        ``True`` shows the bar (tqdm must be installed), ``False`` never does, ``"auto"``
        shows it when standard error is a terminal and tqdm is installed.
    **tqdm_kwargs
        Passed to ``tqdm`` (``total``, ``desc``, ``unit``...).

    Returns
    -------
    iterable
        ``iterable`` itself, or the tqdm bar over it.
    """
    if progress == "auto":
        progress = sys.stderr.isatty()
        try:
            import tqdm  # noqa: F401
        except ImportError:
            progress = False
    if not progress:
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError as exc:
        raise ImportError(
            "progress=True needs tqdm: pip install 'skdc[experiments]' (or pip install tqdm), "
            "or pass progress=False."
        ) from exc
    return tqdm(iterable, **tqdm_kwargs)


# ----------------------------------------------------------------------------- stages of a run

_RUN = contextvars.ContextVar("skdc_run_progress", default=None)


def _mode(progress):
    """``"bar"`` (tqdm), ``"lines"`` (one line per event, for a log file) or ``None``."""
    if progress == "auto":
        if not sys.stderr.isatty():
            return "lines"
        try:
            import tqdm  # noqa: F401
        except ImportError:
            return "lines"
        return "bar"
    if not progress:
        return None
    try:
        import tqdm  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "progress=True needs tqdm: pip install 'skdc[experiments]' (or pip install tqdm), "
            "or pass progress=False."
        ) from exc
    return "bar"


def clock(seconds):
    """Seconds as ``M:SS`` or ``H:MM:SS``.

    Examples
    --------
    >>> from skdc.utils._progress import clock
    >>> clock(7.4), clock(67), clock(3725)
    ('0:07', '1:07', '1:02:05')
    """
    s = int(round(max(0.0, float(seconds))))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _about(seconds):
    """A duration estimate in rounded words: ``"a few seconds"``, ``"about 40 s"``, ``"about
    12 min"``, ``"about 2.5 h"``.

    Examples
    --------
    >>> from skdc.utils._progress import _about
    >>> _about(3), _about(38.2), _about(700), _about(9000)
    ('a few seconds', 'about 40 s', 'about 12 min', 'about 2.5 h')
    """
    seconds = max(0.0, float(seconds))
    if seconds < 7.5:
        return "a few seconds"
    if seconds < 90:
        return f"about {max(5, int(round(seconds / 5.0)) * 5)} s"
    if seconds < 5400:
        return f"about {int(round(seconds / 60.0))} min"
    return f"about {seconds / 3600.0:.1f} h"


def _draws(n):
    """``"1 draw"``, ``"2 draws"``."""
    return f"{n} draw{'' if n == 1 else 's'}"


def _write(text):
    """One line on standard error (above any tqdm bar)."""
    try:
        from tqdm import tqdm
    except ImportError:
        print(text, file=sys.stderr, flush=True)
    else:
        tqdm.write(text, file=sys.stderr)


class RunProgress:
    """The progress of a run of several stages of draws (an audit, a comparison).

    Every stage (:func:`stage_progress`) opened while the run is active reports to it: the
    run knows each stage's planned draws (an upper bound where a sequential rule may decide a
    setting early), times the draws that run, and prints, once after its first batch of draws,
    its estimate of the whole run and how to shorten it.

    Parameters
    ----------
    plan : list of (str, int)
        Each stage's label and its planned draws, in the order they run.
    progress : bool or "auto", default="auto"
        ``True``: tqdm bars; ``"auto"``: bars when standard error is a terminal, else one
        line per stage, per setting decided and per minute of draws; ``False``: silent.
    advice : str, default=None
        How to shorten the run, appended to the estimate.
    name : str, default="skdc"
        Opens every line.
    words : dict of {str: str}, default=None
        Replacements in every line and bar (``{"align__v": "anchor noise v"}``).
    """

    def __init__(self, plan, progress="auto", advice=None, name="skdc", words=None):
        self.plan = [(str(label), int(n)) for label, n in plan]
        self.mode = _mode(progress)
        self.advice, self.name, self.words = advice, name, dict(words or {})
        self.begun = False
        self.prefix = ""
        self.started = time.perf_counter()
        self.busy = 0.0       # seconds spent running fresh draws (wall)
        self.fresh = 0        # draws run (not read back)
        self.done = {}        # stage label -> draws done (fresh or read back)
        self.closed = set()   # stages finished: their plan is the draws they ran
        self.estimated = False
        self._token = None

    def __enter__(self):
        self._token = _RUN.set(self)
        self.started = time.perf_counter()
        return self

    def begin(self):
        """Say the plan, once, as the first work starts (a run refused before any work
        says nothing)."""
        if self.begun:
            return
        self.begun = True
        if self.mode == "lines":
            self.line(f"started: at most {self.planned} draws planned in "
                      f"{len(self.plan)} stage{'s' if len(self.plan) != 1 else ''} ("
                      + ", ".join(f"{label} {n}" for label, n in self.plan) + ")")

    def speak(self, text):
        """``text`` with :attr:`words` replaced."""
        for old, new in self.words.items():
            text = text.replace(old, new)
        return text

    def __exit__(self, *exc):
        _RUN.reset(self._token)
        if self.mode == "lines" and exc[0] is None and self.begun:
            self.line(f"finished: {_draws(sum(self.done.values()))} in "
                      f"{clock(self.elapsed)}")

    @property
    def elapsed(self):
        return time.perf_counter() - self.started

    @property
    def planned(self):
        """Planned draws of the whole run (stages not in the plan count as they start)."""
        return sum(n for _, n in self.plan)

    def line(self, text):
        """One line ``NAME [elapsed] TEXT`` on standard error (in both modes)."""
        _write(f"{self.name} [{clock(self.elapsed)}] {self.speak(text)}")

    def planned_for(self, label, total):
        """The stage's planned draws: the plan's where it names the stage, else ``total``
        (added to the plan)."""
        for k, (known, n) in enumerate(self.plan):
            if known == label:
                if total is None:
                    return n
                self.plan[k] = (label, int(total))  # the stage knows its draws best
                return int(total)
        if total is not None:
            self.plan.append((label, int(total)))
        return total

    def rate(self):
        """Wall seconds per fresh draw so far (``nan`` before any)."""
        return self.busy / self.fresh if self.fresh else float("nan")

    def remaining(self, stage=None):
        """Seconds the draws still planned should take: the current stage's at its own pace,
        the later stages' at the run's pace so far."""
        rate = self.rate()
        if not rate == rate:
            return float("nan")
        left = 0.0
        for label, n in self.plan:
            if label in self.closed:
                continue
            if stage is not None and label == stage.label:
                left += stage.remaining()
            else:
                left += max(0, n - self.done.get(label, 0)) * rate
        return left

    def summary(self, stage=None):
        """``"run 21 of at most 300 draws, about 16 min left"``."""
        left = self.remaining(stage)
        when = "" if not left > 0 else f", {_about(left)} left"
        return f"run {sum(self.done.values())} of at most {self.planned} draws{when}"

    def estimate(self, stage):
        """Print, once, the estimate of the whole run after its first batch of draws (of at
        least two draws, or half a minute)."""
        if self.estimated or not (self.fresh >= 2 or self.busy >= 30.0):
            return
        self.estimated = True
        left = self.remaining(stage)
        n = self.fresh
        text = (f"estimate: the first {n} draws took {self.rate():.3g} s each (wall time); "
                f"the run plans at most {self.planned} draws ({sum(self.done.values())} "
                f"done), so at that pace the rest takes {_about(left)} (less where a "
                "setting is decided early; later stages' draws may cost more or less)")
        if sum(self.done.values()) < self.planned and self.advice:
            text += f". To shorten it: {self.advice}"
        self.line(text + ".")

    def finish(self, label, n):
        """Stage ``label`` is done after ``n`` draws: its plan becomes ``n``."""
        self.closed.add(label)
        self.done[label] = n
        self.plan = [(k, n if k == label else m) for k, m in self.plan]

    def step(self, name):
        """A context naming the stages opened inside it ``NAME: ...``; in lines mode it
        says when ``name`` is done."""
        return _Step(self, name)


class _Step:
    def __init__(self, run, name):
        self.run, self.name = run, name

    def __enter__(self):
        self.t0, self.old = time.perf_counter(), self.run.prefix
        self.run.prefix = f"{self.name}: "
        return self

    def __exit__(self, *exc):
        self.run.prefix = self.old
        if self.run.mode == "lines" and exc[0] is None:
            self.run.begin()
            self.run.line(f"{self.name}: done in {clock(time.perf_counter() - self.t0)}; "
                          f"{self.run.summary()}")


def run_progress(plan, progress="auto", advice=None, name="skdc", words=None):
    """A :class:`RunProgress` over ``plan`` (a context manager).

    Examples
    --------
    >>> from skdc.utils._progress import run_progress, stage_progress
    >>> with run_progress([("grid", 2)], progress=False) as run:
    ...     stage = stage_progress("grid", 2, progress=False)
    >>> run.planned, stage is None
    (2, True)
    """
    return RunProgress(plan, progress, advice, name, words)


class _Stage:
    """One stage's draws: a tqdm bar with its planned total, or lines for a log file."""

    interval = 60.0  # seconds between two lines of progress while draws run (lines mode)

    def __init__(self, desc, total, mode, early, run):
        self.run, self.mode, self.early = run, mode, bool(early)
        if run is not None:
            run.begin()
        self.label = f"{run.prefix}{desc}" if run is not None else desc
        self.total = run.planned_for(self.label, total) if run is not None else total
        self.n, self.fresh, self.resumed, self.busy = 0, 0, 0, 0.0
        self.t0 = self.last = time.perf_counter()
        self._batch = None
        self._bar, self._said = None, ""
        if mode == "bar":
            from tqdm.auto import tqdm

            desc = self.label if not self.early or self.total is None else \
                f"{self.label} (may stop early)"
            desc = desc if run is None else run.speak(desc)
            self._bar = tqdm(total=self.total, desc=desc, unit="draw", file=sys.stderr)
        elif self.total is not None:
            how = (" (at most: a setting is decided as soon as its verdict is certain, so "
                   "it may stop sooner)" if self.early else "")
            self.say(f"started, {_draws(self.total)} planned{how}")
        else:
            self.say("started")

    # -- what the runner reports
    def begin_batch(self):
        self._batch = time.perf_counter()

    def end_batch(self):
        if self._batch is None:
            return
        spent = time.perf_counter() - self._batch
        self._batch = None
        self.busy += spent
        if self.run is not None:
            self.run.busy += spent
            self.run.estimate(self)
        if self._bar is not None:
            self._postfix()

    def update(self, n=1, resumed=False):
        """``n`` draws done (``resumed``: read back from a checkpoint, not run)."""
        n = int(n)
        self.n += n
        if resumed:
            self.resumed += n
        else:
            self.fresh += n
            if self.run is not None:
                self.run.fresh += n
        if self.run is not None:
            self.run.done[self.label] = self.n
        if self.total is not None and self.n > self.total:  # the plan was short: say so
            self.total = self.n
            if self._bar is not None:
                self._bar.total = self.n
        if self._bar is not None:
            self._bar.update(n)
        elif time.perf_counter() - self.last >= self.interval:
            self.say(self.progress())

    def _postfix(self):
        """The bar's postfix: the last setting decided and the run's draws and estimate."""
        parts = [self._said] if self._said else []
        if self.run is not None and len(self.run.plan) > 1:
            parts.append(self.run.summary(self))
        text = "; ".join(parts)
        self._bar.set_postfix_str(text if self.run is None else self.run.speak(text),
                                  refresh=True)

    def decided(self, text):
        """A setting decided: one line in lines mode, the bar's postfix otherwise."""
        if self._bar is not None:
            self._said = text
            self._postfix()
        else:
            self.say(f"{text}; {self.progress()}")

    def close(self):
        if self.run is not None:
            self.run.finish(self.label, self.n)
        if self._bar is not None:
            if self.total is not None and self.n < self.total:
                self._bar.set_postfix_str(f"decided early: {self.total - self.n} planned "
                                          "draws not needed", refresh=False)
            self._bar.close()
            return
        spent = clock(time.perf_counter() - self.t0)
        text = f"done: {_draws(self.n)} in {spent}"
        if self.total is not None and self.n < self.total:
            text = (f"done: {self.n} of at most {self.total} draws in {spent} (decided "
                    f"early: {self.total - self.n} planned draws not needed)")
        if self.resumed:
            text += f"; {self.resumed} read back from the checkpoint"
        self.say(text)

    # -- words
    def remaining(self):
        """Seconds the stage's planned draws still left should take, at its own pace."""
        rate = self.busy / self.fresh if self.fresh else (
            self.run.rate() if self.run is not None else float("nan"))
        if self.total is None or not rate == rate:
            return float("nan")
        return max(0, self.total - self.n) * rate

    def progress(self):
        """``"21 of at most 95 draws, 1:07, about 3 min left at most; run ..."``."""
        of = "" if self.total is None else f" of {'at most ' if self.early else ''}{self.total}"
        left = self.remaining()
        when = "" if not left > 0 else \
            f", {_about(left)} left{' at most' if self.early else ''}"
        text = f"{self.n}{of} draws, {clock(time.perf_counter() - self.t0)}{when}"
        if self.run is not None and len(self.run.plan) > 1:
            text += f"; {self.run.summary(self)}"
        return text

    def say(self, text):
        self.last = time.perf_counter()
        line = f"{self.label}: {text}"
        if self.run is not None:
            self.run.line(line)
        else:
            _write(f"skdc {line}")


def stage_progress(desc, total=None, progress="auto", early=False):
    """The progress of one stage of draws, or ``None`` when ``progress`` says nothing.

    Parameters
    ----------
    desc : str
        The stage, in words (prefixed by the run's current step).
    total : int, default=None
        Planned draws; ``None``: the run's plan for the stage, else unknown.
    progress : bool or "auto", default="auto"
        As :class:`RunProgress` takes it; inside an active run, the run's own setting wins.
    early : bool, default=False
        ``total`` is an upper bound: a sequential rule may decide a setting early.

    Returns
    -------
    stage : object or None
        With ``update(n, resumed=False)``, ``begin_batch()``, ``end_batch()``,
        ``decided(text)`` and ``close()``.

    Examples
    --------
    Outside a terminal, ``"auto"`` writes one line per event to standard error:

    >>> import sys
    >>> from skdc.utils._progress import stage_progress
    >>> sys.stderr = sys.stdout  # for the doctest's eyes
    >>> stage = stage_progress("grid", 2, progress="auto")
    skdc grid: started, 2 draws planned
    >>> stage.update(2); stage.close()
    skdc grid: done: 2 draws in 0:00
    >>> sys.stderr = sys.__stderr__
    """
    run = _RUN.get()
    mode = run.mode if run is not None else _mode(progress)
    if mode is None:
        return None
    return _Stage(desc, total, mode, early, run)
