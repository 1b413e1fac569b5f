"""Provenance of records written by GPU slices: which code ran, and the caption that says so.

A GPU machine receives a copy of the working tree with the repository's .git as it was when the
session began, so records written there name that older commit "+dirty" with the changed lib/
files listed (`git_dirty_files`). `code_commit` recovers the commit whose lib/ ran; a planned
figure's records span sessions (each its own commit), and `caption` names each one with its
count of trainings. Records written since `lib_digest` exists also carry a digest of lib/.
"""
from __future__ import annotations

import functools


def code_commit(records: dict, root=None) -> str | None:
    """The commit whose lib/ ran, for records written on a machine that got a copy of the tree.

    A GPU machine receives the working tree with the repository's .git as it was when the
    session began, so git there sees that older commit "+dirty", with the changed files under
    lib/ listed in `git_dirty_files`. The code that ran is the oldest commit after that one
    whose lib/ differs from it in exactly those files (a folder listed with a trailing "/"
    stands for the new files in it). Returns the commit (12 hex digits), the records' own
    commit when they are clean, or None when no commit matches (or git cannot tell). Needs the
    repository's history (`root`: the repository, by default this one). Records written since
    `lib_digest` exists also carry a digest of lib/ itself."""
    commits = {r["git_commit"] for r in records.values()}
    dirty = {tuple(sorted(r.get("git_dirty_files", []))) for r in records.values()}
    if len(commits) != 1 or len(dirty) != 1:
        return None
    (commit,), (files,) = commits, dirty
    if not commit.endswith("+dirty"):
        return commit
    if root is None:
        from lengthgen.results import REPO_ROOT
        root = REPO_ROOT
    return _commit_with_lib_changes(str(root), commit.removesuffix("+dirty"), files)


@functools.lru_cache(maxsize=8)
def _commit_with_lib_changes(root: str, base: str, files: tuple) -> str | None:
    """The oldest commit after `base` whose lib/ differs from base's in exactly `files`: every
    commit's lib/ tree is named in one call to git, and the distinct trees are compared with
    base's in one more (git diff-tree --stdin), so that a long history costs two processes,
    not two per commit. (The book builds this caption at every build.)"""
    import subprocess

    def git(*args, stdin=None) -> str:
        return subprocess.run(["git", *args], cwd=root, input=stdin, capture_output=True,
                              text=True, check=True).stdout
    try:
        candidates = git("rev-list", f"{base}..HEAD").split()   # newest first
        if not candidates:
            return None
        trees = git("rev-parse", f"{base}:lib", *(f"{c}:lib" for c in candidates)).split()
        base_tree, trees = trees[0], trees[1:]
        distinct = list(dict.fromkeys(trees))
        changes: dict[str, dict[str, str]] = {tree: {} for tree in distinct}
        current = None
        out = git("diff-tree", "--stdin", "-r", "--name-status",
                  stdin="".join(f"{base_tree} {tree}\n" for tree in distinct))
        for line in out.splitlines():
            if "\t" not in line:   # the pair of trees whose changes follow
                current = line.split()[-1]
                continue
            status, path = line.split("\t")[0], line.split("\t")[-1]
            changes[current]["lib/" + path] = status[0]
    except (OSError, subprocess.CalledProcessError):
        return None
    found = None
    for candidate, tree in zip(candidates, trees):   # newest first: keep the oldest
        changed = changes[tree]
        listed = set()
        for entry in files:
            if entry.endswith("/"):   # a new folder: every file in it must be new
                inside = {f for f in changed if f.startswith(entry)}
                if not inside or any(changed[f] != "A" for f in inside):
                    break
                listed |= inside
            else:
                listed.add(entry)
        else:
            if listed == set(changed):
                found = candidate[:12]
    return found


def code_commits(records: dict, root=None) -> dict[str, str | None]:
    """{commit the machine saw: the commit whose lib/ ran (`code_commit`)} for each GPU run
    (session) that wrote some of the records: a sweep spans sessions, each its own commit."""
    runs: dict = {}
    for name, record in records.items():
        runs.setdefault(record["git_commit"], {})[name] = record
    return {seen: code_commit(run, root) for seen, run in runs.items()}


def caption(records: dict) -> str:
    """The provenance line under a table of slice records ({run name: record}): their own
    caption, with the commit whose lib/ ran (`code_commit`) where the machine's git saw an
    older one "+dirty", and, where several runs wrote them, each run's commit with its count
    of trainings."""
    from lengthgen.runs.records import caption as records_caption
    if not records:
        return "No records yet."
    text = records_caption(list(records.values()))
    # a job's wall time is its group's time until the job's record was written: the caption's
    # sum over records would count a group once per member
    groups: dict = {}
    for r in records.values():
        key = (r.get("started"), r["command"])
        groups[key] = max(groups.get(key, 0.0), r["wall_time_s"])
    total = f"{len(records)} run(s), {sum(r['wall_time_s'] for r in records.values()):.0f} s"
    text = text.replace(total, f"{len(records)} trainings in {len(groups)} groups, which ran "
                               f"{sum(groups.values()):.0f} s in all (several at once)")
    commits = code_commits(records)
    if len(commits) == 1:
        (seen, commit), = commits.items()
        if commit and commit != seen:
            text = text.replace(f"commit: {seen}", f"commit: {commit} (the GPU machine's copy of "
                                f"the repository saw {seen}, with exactly that commit's lib/ "
                                f"changes)")
        return text
    by_date = sorted(records.values(), key=lambda r: r["date"])
    runs = list(dict.fromkeys(r["git_commit"] for r in by_date))   # oldest run first
    counts = {seen: sum(r["git_commit"] == seen for r in by_date) for seen in runs}
    named = "; ".join(f"{commits[seen] or seen} ({counts[seen]} training"
                      f"{'' if counts[seen] == 1 else 's'})" for seen in runs)
    start = text.index("commit: ") + len("commit: ")
    end = text.index(" | ", start)
    return f"{text[:start]}{named}{text[end:]}"

