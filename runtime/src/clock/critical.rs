//! The critical path: the lower bound on a run's cycles from its dependencies alone.

use super::graph::Clock;
use super::ready::Node;
use crate::graph::TaskId;

impl Clock<'_> {
    /// The longest chain of dependencies, each task taking its dispatch latency and its
    /// cycles (kernels) or transfer (collectives), each channel delivery its latency, and
    /// nothing else.
    pub(super) fn critical_path(&self) -> u64 {
        let mut chains = Chains {
            node: vec![0u64; self.nodes.len()],
            common: vec![0u64; self.launches.len()],
            uniform: vec![None; self.launches.len()],
            steps: (0..self.launches.len()).map(|_| Steps::None).collect(),
        };
        // Predecessors come first in enumeration order, so one pass finds every chain's end.
        for n in 0..self.entries {
            let start = self.preds_end(&chains.node, n);
            chains.node[n] = match self.nodes[n] {
                Node::Kernel(k) => start + self.own(k, self.ids[n]),
                Node::Collective(c) => start + self.collective_cycles[c as usize],
                Node::Barrier | Node::Instance(..) => start,
                Node::Launch(l) => {
                    let launch = &self.launches[l as usize];
                    chains.common[l as usize] = start;
                    // Its instances that are nodes: their predecessors came before.
                    let lo = self.pinned.partition_point(|&t| t < launch.first);
                    let hi = self
                        .pinned
                        .partition_point(|&t| t < launch.first + launch.count);
                    if launch.sequential {
                        self.sequential_chain(l, start, (lo, hi), &mut chains)
                    } else {
                        self.parallel_chain(l, start, (lo, hi), &mut chains)
                    }
                }
            };
        }
        chains.node.into_iter().max().unwrap_or(0)
    }

    /// A kernel task's own length on a chain: its dispatch latency and its cycles.
    fn own(&self, k: u32, t: TaskId) -> u64 {
        self.latency + self.cycles(k, t)
    }

    /// Where the last predecessor of node `n` ends on `chain`, with its delivery's latency.
    fn preds_end(&self, chain: &[u64], n: usize) -> u64 {
        let (a, b) = (self.pred_at[n] as usize, self.pred_at[n + 1] as usize);
        let delay = |k: usize| self.pred_delay.get(k).copied().unwrap_or(0);
        (a..b)
            .map(|k| chain[self.preds[k] as usize] + delay(k))
            .max()
            .unwrap_or(0)
    }

    /// Where the last step of sequential launch `l` ends, its shared predecessors ending at
    /// `start`; `lo..hi` are its instances that are nodes, as indices into `pinned`.
    fn sequential_chain(
        &self,
        l: u32,
        start: u64,
        (lo, hi): (usize, usize),
        chains: &mut Chains,
    ) -> u64 {
        let launch = &self.launches[l as usize];
        // Its steps in order, each after the one before.
        let plain = hi == lo && self.extra_cycles.is_empty() && launch.links_in.is_empty();
        if plain {
            let step = self.own(launch.kernel, launch.first);
            chains.steps[l as usize] = Steps::Alike { start, step };
            start + step * u64::from(launch.count)
        } else {
            let mut each: Vec<u64> = Vec::with_capacity(launch.count as usize);
            for i in 0..launch.count {
                let t = launch.first + i;
                let mut from = self.linked_chain(l, i, chains);
                from = from.max(each.last().copied().unwrap_or(0));
                let node = self.pinned_node(launch, i);
                if let Some(n) = node {
                    from = from.max(self.preds_end(&chains.node, n as usize));
                }
                let end = from + self.own(launch.kernel, t);
                if let Some(n) = node {
                    chains.node[n as usize] = end;
                }
                each.push(end);
            }
            let last = each.last().copied().unwrap_or(start);
            chains.steps[l as usize] = Steps::Each(each);
            last
        }
    }

    /// Where the last instance of launch `l`, not sequential, ends; its shared predecessors
    /// end at `start`, and `lo..hi` are its instances that are nodes, as indices into
    /// `pinned`.
    fn parallel_chain(
        &self,
        l: u32,
        start: u64,
        (lo, hi): (usize, usize),
        chains: &mut Chains,
    ) -> u64 {
        let launch = &self.launches[l as usize];
        for j in self.entries + lo..self.entries + hi {
            let Node::Instance(_, i) = self.nodes[j] else {
                continue;
            };
            let linked = self.linked_chain(l, i, chains);
            chains.node[j] =
                self.preds_end(&chains.node, j).max(linked) + self.own(launch.kernel, self.ids[j]);
        }
        // Every instance's chain is the same unless some have predecessors or
        // cycles of their own, or a link that matters covers only some.
        let links = launch.links_in.iter();
        let same = hi == lo
            && self.extra_cycles.is_empty()
            && links.clone().all(|&(p, c)| {
                chains.uniform[p as usize].is_some_and(|v| c == launch.count || v <= start)
            });
        if same {
            let linked = links.filter_map(|&(p, _)| chains.uniform[p as usize]);
            let v = linked.fold(start, u64::max) + self.own(launch.kernel, launch.first);
            chains.uniform[l as usize] = Some(v);
            v
        } else {
            (0..launch.count)
                .map(|i| self.instance_chain(l, i, chains))
                .max()
                .unwrap_or(0)
        }
    }

    /// Where instance `i` of launch `l` may start on the critical path: after its shared
    /// predecessors and the instances it is linked to.
    fn linked_chain(&self, l: u32, i: u32, chains: &Chains) -> u64 {
        let launch = &self.launches[l as usize];
        let linked = launch.links_in.iter().filter(|&&(_, c)| i < c);
        linked
            .map(|&(p, _)| self.instance_chain(p, i, chains))
            .fold(chains.common[l as usize], u64::max)
    }

    /// Where instance `i` of launch `l` ends on the critical path.
    fn instance_chain(&self, l: u32, i: u32, chains: &Chains) -> u64 {
        if let Some(v) = chains.uniform[l as usize] {
            return v;
        }
        match &chains.steps[l as usize] {
            Steps::None => {}
            Steps::Alike { start, step } => return start + step * u64::from(i + 1),
            Steps::Each(each) => return each[i as usize],
        }
        let launch = &self.launches[l as usize];
        if let Some(n) = self.pinned_node(launch, i) {
            return chains.node[n as usize];
        }
        let t = launch.first + i;
        self.linked_chain(l, i, chains) + self.latency + self.cycles(launch.kernel, t)
    }
}

/// The critical path's chains so far.
struct Chains {
    /// Per node where it ends (a launch: its last instance).
    node: Vec<u64>,
    /// Per launch, where its shared predecessors end.
    common: Vec<u64>,
    /// Per launch whose instances all end at once: when.
    uniform: Vec<Option<u64>>,
    /// Per sequential launch, where its steps end.
    steps: Vec<Steps>,
}

/// Where the steps of a sequential launch end on the critical path.
enum Steps {
    /// Not a sequential launch.
    None,
    /// Each step after the one before, from `start`, `step` cycles each.
    Alike { start: u64, step: u64 },
    /// Step by step, where steps differ (their own cycles, predecessors or links).
    Each(Vec<u64>),
}
