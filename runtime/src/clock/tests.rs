//! The clock's tests: a launch stays one node, and a graph with launches simulates as the
//! same graph with every instance a task of its own.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use wsp_ir::schedule::{Dispatch, Timing, WindowMode};
use wsp_ir::{Directive, ScalarExpr};

use super::graph::Clock;
use super::policy::Rules;
use super::{Costs, KernelCost, simulate};
use crate::clock::target::TargetDesc;
use crate::graph::{Graph, Launch, Task, TaskId, TaskKind};

/// A random graph: tasks, barriers, collectives and launches in two executions, with
/// edges to and from single instances, every instance, or some of them, and links.
fn graph(rng: &mut Pcg64) -> (Graph, Vec<(TaskId, TaskId)>) {
    let mut g = Graph::default();
    let mut ranges = Vec::new();
    for _ in 0..2 {
        let lo = g.next_id();
        // (first id, count) per entry, and the launches' first ids.
        let mut entries: Vec<(TaskId, u32)> = Vec::new();
        for _ in 0..rng.random_range(1..12) {
            let task = |kind| Task {
                kind,
                args: 0,
                sig: 0,
                index: 0,
            };
            let first = match rng.random_range(0..8) {
                0..3 => {
                    let id = g.push(task(TaskKind::Kernel(rng.random_range(0..3))));
                    if rng.random_bool(0.2) {
                        g.keys.resize(id as usize, (0, -1));
                        g.keys.push((rng.random_range(-3..9), 0));
                    }
                    (id, 1)
                }
                3 => (g.push(task(TaskKind::Barrier)), 1),
                4 => (
                    g.push(task(TaskKind::Collective(rng.random_range(0..2)))),
                    1,
                ),
                _ => {
                    let count = rng.random_range(2..9);
                    let sequential = rng.random_bool(0.3);
                    let launch = Launch {
                        kernel: rng.random_range(0..3),
                        first: 0,
                        count,
                        entry: 0,
                        sig: 0,
                        tiles: Vec::new(),
                        index: vec![(0, 1)],
                        sequential,
                    };
                    let first = g.push_launch(launch);
                    if sequential {
                        // Each step after the one before (implied), and some after an
                        // earlier one.
                        for t in first + 2..first + count {
                            if rng.random_bool(0.2) {
                                g.edges.push((rng.random_range(first..t - 1), t));
                            }
                        }
                    }
                    (first, count)
                }
            };
            entries.push(first);
        }
        for _ in 0..rng.random_range(0..3 * entries.len()) {
            let a = rng.random_range(0..entries.len());
            let b = rng.random_range(0..entries.len());
            if a >= b {
                continue;
            }
            let ((pa, ca), (pb, cb)) = (entries[a], entries[b]);
            // Which instances of each end: one, all, or the first few.
            let mut some = |first: TaskId, count: u32| -> Vec<TaskId> {
                match rng.random_range(0..3) {
                    0 => vec![first + rng.random_range(0..count)],
                    1 => (first..first + count).collect(),
                    _ => (first..first + rng.random_range(1..=count)).collect(),
                }
            };
            let (from, to) = (some(pa, ca), some(pb, cb));
            for &p in &from {
                g.edges.extend(to.iter().map(|&s| (p, s)));
            }
            if ca > 1 && cb > 1 && rng.random_bool(0.5) {
                g.links.push((pa, pb));
            }
        }
        ranges.push((lo, g.next_id()));
    }
    (g, ranges)
}

fn schedule(rng: &mut Pcg64) -> Vec<Directive> {
    let key = ScalarExpr::Const(0);
    let mut s = vec![match rng.random_range(0..5) {
        0 => Directive::Dispatch(Dispatch::RoundRobin(rng.random_range(1..5))),
        1 => Directive::Dispatch(Dispatch::WorkSteal),
        2 => Directive::Dispatch(Dispatch::Affinity(key, rng.random_range(0..4))),
        3 => Directive::Dispatch(Dispatch::Hash(key, rng.random_range(0..4))),
        _ => Directive::Timing(Timing::Immediate),
    }];
    match rng.random_range(0..5) {
        0 => s.push(Directive::Timing(Timing::Batched(rng.random_range(1..4)))),
        1 => s.push(Directive::Timing(Timing::RateLimit(1e8))),
        2 => s.push(Directive::Window {
            size: rng.random_range(1..4),
            unit: "tasks".into(),
            mode: WindowMode::Stall,
        }),
        _ => {}
    }
    s
}

/// A launch is one node however many instances it has, and an AICPU holds its ready
/// instances as one run: the clock's memory does not grow with the instance count.
#[test]
fn a_launch_is_one_node_and_one_run_per_aicpu() {
    let mut g = Graph::default();
    let count = 1 << 24;
    g.push_launch(Launch {
        kernel: 0,
        first: 0,
        count,
        entry: 0,
        sig: 0,
        tiles: Vec::new(),
        index: vec![(0, 1)],
        sequential: false,
    });
    let target = TargetDesc::default();
    let rules = Rules::of(&[], target.aicpus);
    let kernels = [KernelCost {
        cycles: 10,
        ..KernelCost::default()
    }];
    let costs = Costs {
        kernels: &kernels,
        extra_cycles: &[],
        collectives: &[],
        keys: None,
        channel_latency: 0,
    };
    let mut clock = Clock::new(&g, 0, count, &rules, costs, &target, false);
    assert_eq!((clock.nodes.len(), clock.pinned.len()), (1, 0));
    assert_eq!(clock.resolve(0), None);
    let runs: Vec<(usize, usize)> = clock
        .ready
        .iter()
        .map(|set| (set.items.len(), set.len))
        .collect();
    // Round robin: AICPU q gets instances q, q + aicpus, ...
    let each = (0..target.aicpus).map(|q| (1, (count - q).div_ceil(target.aicpus) as usize));
    assert_eq!(runs, each.collect::<Vec<_>>());
}

/// The clock over a graph with launches equals the clock over the same graph with
/// every instance a task of its own (`Graph::expand`): the same cycles, critical path,
/// busy cycles and the same span for every task; with channel deliveries (every edge of
/// some tasks that are not instances, as a sent task's are) delayed by a latency too.
#[test]
fn launches_simulate_as_their_instances_would() {
    let mut delayed = 0;
    for seed in 0..3000 {
        let rng = &mut Pcg64::seed_from_u64(seed);
        let (mut with_launches, ranges) = graph(&mut rng.clone());
        let (mut expanded, _) = graph(rng);
        expanded.expand();
        let channel_latency = if rng.random_bool(0.5) {
            rng.random_range(1..40)
        } else {
            0
        };
        let senders: Vec<TaskId> = (0..with_launches.next_id())
            .filter(|&t| with_launches.instance_of(t).is_none())
            .filter(|_| rng.random_bool(0.3))
            .collect();
        let deliveries: Vec<(TaskId, TaskId)> = with_launches
            .edges
            .iter()
            .copied()
            .filter(|(p, _)| senders.contains(p))
            .collect();
        with_launches.deliveries = deliveries.clone();
        expanded.deliveries = deliveries;
        let schedule = schedule(rng);
        let cube_cores = rng.random_range(1..4);
        let target = TargetDesc {
            aicpus: rng.random_range(1..5),
            cube_cores,
            // Clusters (two vector cores a cube core) half the time: AICPUs own them.
            vector_cores: match rng.random_bool(0.5) {
                true => 2 * cube_cores,
                false => rng.random_range(1..4),
            },
            aicpu_owns_clusters: rng.random_bool(0.7),
            dispatch_latency: rng.random_range(0..6),
            batch_issue: rng.random_range(0..3),
            core_pickup: rng.random_range(0..4),
            completion_latency: rng.random_range(0..4),
            steal_latency: rng.random_range(0..4),
            // Little enough that tasks running together stretch their transfers.
            chip_gm_gb_s: rng.random_range(5.0..40.0),
            ..TargetDesc::default()
        };
        let kernels: Vec<KernelCost> = (0..3)
            .map(|_| {
                let cycles = rng.random_range(1..30);
                KernelCost {
                    cycles,
                    cube: rng.random_bool(0.4),
                    vector_cycles: rng.random_range(0..10),
                    gm_cycles: rng.random_range(0..=cycles),
                    gm_bytes: rng.random_range(0..200),
                }
            })
            .collect();
        let ids = with_launches.next_id() as usize;
        let extra: Vec<u64> = match rng.random_bool(0.3) {
            true => (0..ids).map(|_| rng.random_range(0..10)).collect(),
            false => Vec::new(),
        };
        let collectives = [rng.random_range(0..20), rng.random_range(0..20)];
        for &(lo, hi) in &ranges {
            let run = |g: &Graph| {
                let costs = Costs {
                    kernels: &kernels,
                    extra_cycles: &extra,
                    collectives: &collectives,
                    keys: None,
                    channel_latency,
                };
                let mut t = simulate(g, lo, hi, &schedule, costs, &target, true);
                t.spans.sort_by_key(|s| s.task);
                t
            };
            let t = run(&with_launches);
            assert_eq!(
                t,
                run(&expanded),
                "seed {seed}, tasks {lo}..{hi}, {schedule:?}"
            );
            if channel_latency > 0 {
                let costs = Costs {
                    kernels: &kernels,
                    extra_cycles: &extra,
                    collectives: &collectives,
                    keys: None,
                    channel_latency: 0,
                };
                let undelayed = simulate(&with_launches, lo, hi, &schedule, costs, &target, false);
                // (Not always later: list scheduling is not monotonic.)
                delayed += usize::from(undelayed.total_cycles != t.total_cycles);
            }
        }
    }
    // The latency is felt, not only carried.
    assert!(delayed > 300, "{delayed}");
}
