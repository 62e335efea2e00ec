//! The CPU time of the servers `bench` measures, and of the processes
//! they start, from `/proc` (Linux only; elsewhere nothing is read).

/// The CPU figure's resolution: the kernel counts it in ticks of 10 ms.
pub(super) const CPU_TICK_SECONDS: f64 = 0.01;

/// The most descendants of the servers followed (a server that starts
/// processes without end is not followed past them).
const MAX_DESCENDANTS: usize = 4_096;

/// A process's CPU seconds (user + system) so far: its own, and those of
/// the children it waited for when they ended (theirs included, as far
/// down as each waited for its own).
struct Times {
    own: f64,
    waited_for: f64,
}

/// `pid`'s [`Times`], from `/proc/<pid>/stat`.
fn times(pid: u32) -> Option<Times> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let field = |at: usize| fields.get(at)?.parse::<f64>().ok();
    // Linux reports these in USER_HZ, 100 per second on every common architecture.
    Some(Times {
        own: (field(11)? + field(12)?) / 100.0,
        waited_for: (field(13)? + field(14)?) / 100.0,
    })
}

/// CPU seconds (user + system) a process has used so far.
pub(super) fn cpu_seconds(pid: u32) -> Option<f64> {
    times(pid).map(|times| times.own)
}

/// The CPU seconds `pids` have used (`None` when there are none, or one
/// cannot be read).
pub(super) fn cpu_of(pids: &[u32]) -> Option<f64> {
    if pids.is_empty() {
        return None;
    }
    pids.iter().copied().map(cpu_seconds).sum()
}

/// `pids` less those whose CPU time cannot be read, each named in a
/// warning (a `--server-pid` that is not there hid every figure).
pub(super) fn readable(pids: Vec<u32>) -> Vec<u32> {
    pids.into_iter()
        .filter(|&pid| {
            let known = cpu_seconds(pid).is_some();
            if !known {
                tracing::warn!(pid, "cannot read the CPU time of process {pid} (/proc/{pid}/stat): left out of the server CPU");
            }
            known
        })
        .collect()
}

/// The CPU seconds the processes `servers` started have used so far:
/// those running (children, their children, and so on, at most
/// [`MAX_DESCENDANTS`]) and those that ended and were waited for. `None`
/// when there are none of either. A process whose parent ended before it
/// is no longer theirs (nor is one that ends between two readings).
pub(super) fn descendants_cpu(servers: &[u32]) -> Option<f64> {
    let mut total = 0.0;
    let mut any = false;
    for times in servers.iter().filter_map(|&pid| times(pid)) {
        total += times.waited_for;
        any |= times.waited_for > 0.0;
    }
    // Each process once: a server named twice, or one that is another's
    // child, is not its own descendant.
    let mut seen: std::collections::HashSet<u32> = servers.iter().copied().collect();
    let mut pending = children_of(servers);
    let mut followed = 0;
    while let Some(pid) = pending.pop() {
        if !seen.insert(pid) {
            continue;
        }
        if followed == MAX_DESCENDANTS {
            break;
        }
        followed += 1;
        let Some(times) = times(pid) else { continue };
        any = true;
        total += times.own + times.waited_for;
        pending.extend(children_of(&[pid]));
    }
    any.then_some(total)
}

/// The CPU seconds the servers' descendants used between two readings of
/// [`descendants_cpu`]: `None` when neither found any.
pub(super) fn descendants_used(before: Option<f64>, after: Option<f64>) -> Option<f64> {
    if before.is_none() && after.is_none() {
        return None;
    }
    // (One that outlived its parent leaves the account: never below zero.)
    Some((after.unwrap_or(0.0) - before.unwrap_or(0.0)).max(0.0))
}

/// The child processes of `pids` (those of each of their threads).
fn children_of(pids: &[u32]) -> Vec<u32> {
    let mut children = Vec::new();
    for pid in pids {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            if let Ok(list) = std::fs::read_to_string(task.path().join("children")) {
                children.extend(
                    list.split_whitespace()
                        .filter_map(|pid| pid.parse::<u32>().ok()),
                );
            }
        }
    }
    children
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::{descendants_cpu, descendants_used};

    /// A child that ended and was waited for still counts: its time is in
    /// its parent's account.
    #[test]
    fn a_child_waited_for_counts() {
        let me = std::process::id();
        let before = descendants_cpu(&[me]);
        // A child that spins for about 300 ms of CPU, then ends.
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
            .status()
            .expect("sh runs");
        assert!(status.success());
        let after = descendants_cpu(&[me]);
        let used = descendants_used(before, after).expect("a figure");
        assert!(used > 0.0, "{before:?} {after:?}");
    }

    #[test]
    fn none_before_and_after_is_no_figure() {
        assert_eq!(descendants_used(None, None), None);
        assert_eq!(descendants_used(None, Some(0.5)), Some(0.5));
        assert_eq!(descendants_used(Some(1.0), Some(0.5)), Some(0.0));
    }
}
