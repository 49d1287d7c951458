//! Each AICPU's ready set: the tasks it may hand out, by ready time, then enumeration order,
//! with a launch's ready instances held as one run.

use std::collections::BTreeMap;

use super::graph::Clock;
use super::policy::Policy;
use crate::graph::TaskId;

/// A node of the clock's graph: an entry of the task graph, or a launch instance with
/// dependencies of its own.
#[derive(Debug, Clone, Copy)]
pub(super) enum Node {
    Kernel(u32),
    Barrier,
    Collective(u32),
    /// A launch, by index in `Clock::launches`. Its predecessors are what every instance
    /// waits for; it is dispatched, for its successors, when its last instance is.
    Launch(u32),
    /// Launch, instance number.
    Instance(u32, u32),
}

/// What an AICPU dispatches: a kernel node, or a launch instance.
#[derive(Debug, Clone, Copy)]
pub(super) enum Target {
    Node(u32),
    Instance(u32, u32),
}

/// An entry of a ready set, keyed by (ready time, task id).
#[derive(Debug, Clone, Copy)]
pub(super) enum Item {
    One(Target),
    /// `left` instances of a launch that wait only for its shared predecessors, from
    /// instance `head` on: those this AICPU gets, in order. Its key's task id is at most
    /// `head`'s (the run's first), and no other entry's lies between.
    Run {
        launch: u32,
        head: u32,
        left: u32,
    },
}

#[derive(Default)]
pub(super) struct ReadySet {
    pub(super) items: BTreeMap<(u64, TaskId), Item>,
    /// Tasks, counting each run's.
    pub(super) len: usize,
}

pub(super) struct LaunchInfo {
    pub(super) node: u32,
    pub(super) first: TaskId,
    pub(super) count: u32,
    pub(super) kernel: u32,
    /// Instance 0's place among the kernel tasks.
    pub(super) ordinal: u64,
    /// How far apart the instances one AICPU gets are.
    pub(super) stride: u32,
    /// Instances `0..cover` wait for an instance of another launch.
    pub(super) cover: u32,
    /// Each instance after the first waits for the one before (a `P.seq` loop's steps).
    pub(super) sequential: bool,
    /// The links into it: the launch waited for, and how many instances the link covers.
    pub(super) links_in: Vec<(u32, u32)>,
    pub(super) links_out: Vec<u32>,
    /// Instances (numbers, sorted) with predecessors of their own besides links.
    pub(super) pinned_in: Vec<u32>,
    /// Whether any instance is a node of its own.
    pub(super) pinned: bool,
    /// Instances not dispatched yet.
    pub(super) left: u32,
    pub(super) max_end: u64,
    /// When its shared predecessors had all ended, once they have.
    pub(super) common: Option<u64>,
    /// Instances whose own predecessors have ended before the shared ones: number, time.
    pub(super) parked: Vec<(u32, u64)>,
}

impl LaunchInfo {
    fn free(&self, i: u32) -> bool {
        i >= self.cover && !(self.sequential && i > 0) && self.pinned_in.binary_search(&i).is_err()
    }

    /// How many instances instance `i` waits for, one each: links, and the step before.
    pub(super) fn waits(&self, i: u32) -> u32 {
        let links = self.links_in.iter().filter(|&&(_, c)| i < c).count() as u32;
        links + u32::from(self.sequential && i > 0)
    }

    /// The first instance from `i` on, `stride` apart, that waits only for the shared
    /// predecessors.
    pub(super) fn next_free(&self, mut i: u32) -> Option<u32> {
        if self.sequential {
            return (i == 0 && self.free(0)).then_some(0);
        }
        if i < self.cover {
            i += (self.cover - i).div_ceil(self.stride) * self.stride;
        }
        while i < self.count {
            if self.free(i) {
                return Some(i);
            }
            i += self.stride;
        }
        None
    }

    /// How many instances from `i` on, `stride` apart, wait only for the shared predecessors
    /// (`i` at or past `cover`).
    pub(super) fn free_from(&self, i: u32) -> u32 {
        if self.sequential {
            return u32::from(i == 0 && self.free(0));
        }
        let own = self
            .pinned_in
            .iter()
            .filter(|&&p| p >= i && (p - i).is_multiple_of(self.stride));
        (self.count - i).div_ceil(self.stride) - own.count() as u32
    }

    /// The first instance the policy gives AICPU `q`. Instances have no schedule keys: a
    /// loop with keys is enumerated task by task.
    pub(super) fn first_on(&self, policy: Policy, q: u32) -> Option<u32> {
        let start = match policy {
            Policy::RoundRobin(k) if q < k => {
                let k = u64::from(k);
                ((u64::from(q) + k - self.ordinal % k) % k) as u32
            }
            Policy::RoundRobin(_) => return None,
            _ if policy.queue(self.ordinal, 0) == q => 0,
            _ => return None,
        };
        (start < self.count).then_some(start)
    }
}

impl Clock<'_> {
    pub(super) fn insert(&mut self, q: usize, key: (u64, TaskId), item: Item, tasks: usize) {
        // An instance that joins a run of its launch at the same time splits it, so the
        // set's order stays enumeration order.
        if let Item::One(Target::Instance(l, i)) = item
            && let Some((&(r, id), &Item::Run { launch, head, left })) =
                self.ready[q].items.range(..key).next_back()
            && launch == l
            && r == key.0
        {
            let run = &self.launches[l as usize];
            let items = &mut self.ready[q].items;
            if i < head {
                // It goes before the run's first: the run's key moves up to its first.
                let item = items.remove(&(r, id)).expect("found above");
                items.insert((r, run.first + head), item);
            } else {
                let before = run.free_from(head) - run.free_from(i);
                if before < left {
                    let next = run.next_free(i).expect("the run goes on");
                    let first = Item::Run {
                        launch,
                        head,
                        left: before,
                    };
                    items.insert((r, id), first);
                    let rest = Item::Run {
                        launch,
                        head: next,
                        left: left - before,
                    };
                    items.insert((r, run.first + next), rest);
                }
            }
        }
        self.ready[q].items.insert(key, item);
        self.ready[q].len += tasks;
        self.touched.push(q);
    }

    /// Removes task `id`, ready at `r`, from the ready set of AICPU `q` (of a run: its
    /// first, which moves on in place).
    pub(super) fn take(&mut self, q: usize, (r, id): (u64, TaskId)) {
        let set = &mut self.ready[q];
        set.len -= 1;
        let (&key, item) = set
            .items
            .range_mut(..=(r, id))
            .next_back()
            .expect("a ready task");
        match item {
            Item::Run { launch, head, left } if *left > 1 => {
                let l = &self.launches[*launch as usize];
                *head = l.next_free(*head + l.stride).expect("a run's count");
                *left -= 1;
            }
            _ => {
                set.items.remove(&key);
            }
        }
    }

    /// AICPU `q`'s ready set entry by entry, in the order it hands them out: each entry's
    /// first task and how many tasks it holds, all of one kernel.
    pub(super) fn ready_entries(
        &self,
        q: usize,
    ) -> impl Iterator<Item = ((u64, TaskId, Target), u32)> + '_ {
        self.ready[q]
            .items
            .iter()
            .map(|(&(r, id), &item)| match item {
                Item::One(t) => ((r, id, t), 1),
                Item::Run { launch, head, left } => {
                    let first = self.launches[launch as usize].first + head;
                    ((r, first, Target::Instance(launch, head)), left)
                }
            })
    }

    /// The tasks AICPU `q`'s ready set holds, in the order it hands them out.
    pub(super) fn ready_tasks(&self, q: usize) -> impl Iterator<Item = (u64, TaskId, Target)> + '_ {
        self.ready[q].items.iter().flat_map(|(&(r, id), &item)| {
            let (one, run) = match item {
                Item::One(t) => (Some((r, id, t)), None),
                Item::Run { launch, head, left } => {
                    let l = &self.launches[launch as usize];
                    let each = std::iter::successors(Some(head), |&i| l.next_free(i + l.stride));
                    let tasks = each.take(left as usize);
                    (
                        None,
                        Some(tasks.map(move |i| (r, l.first + i, Target::Instance(launch, i)))),
                    )
                }
            };
            one.into_iter().chain(run.into_iter().flatten())
        })
    }
}
