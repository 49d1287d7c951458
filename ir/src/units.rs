//! The units of an AICore that does not mix them (A2/A3: separate AIC and AIV cores), and
//! where each op of a kernel runs: what `crate::split` and `crate::mixed` both divide
//! kernels by.

use crate::arch::Arch;
use crate::buffers::{bias_add, converts_matmul, cube_transpose};
use crate::kernel::{Kernel, Op, Operand, ParamType, ValueType};

/// The unit a part runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Core {
    /// AIC: the cube unit (matmuls, and the fixpipe's conversion as it stores an L0C result).
    Cube,
    /// AIV: the vector unit.
    Vector,
}

impl Core {
    pub(crate) fn other(self) -> Core {
        match self {
            Core::Cube => Core::Vector,
            Core::Vector => Core::Cube,
        }
    }

    /// The prefix of a part's name.
    pub fn name(self) -> &'static str {
        match self {
            Core::Cube => "aic",
            Core::Vector => "aiv",
        }
    }
}

/// Where an op runs: on one unit, or anywhere (loads of parameters, constants, scalar
/// arithmetic), repeated in every part that needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    On(Core),
    Anywhere,
}

/// Where op `i` of `k` runs, given where the ops before it do (`places`).
pub(crate) fn place(k: &Kernel, ops: &[Op], i: usize, places: &[Place], arch: &Arch) -> Place {
    let op = &ops[i];
    let value_place = |o: &Operand| match o {
        Operand::Value(v) => places[*v as usize],
        _ => Place::Anywhere,
    };
    match op.op.as_str() {
        "matmul" => Place::On(Core::Cube),
        "cast" if converts_matmul(ops, i) => Place::On(Core::Cube),
        "add" if bias_add(k, ops, i, &arch.on_chip).is_some() => Place::On(Core::Cube),
        "transpose" if cube_transpose(k, ops, i) => Place::On(Core::Cube),
        "load" | "constant" => Place::Anywhere,
        // A store runs where its value is; a parameter copied as it is goes through UB.
        "store" => match op.args.get(1).map(value_place) {
            Some(Place::On(c)) => Place::On(c),
            _ => Place::On(Core::Vector),
        },
        _ if matches!(op.ty, ValueType::Scalar(_)) => {
            // Scalar arithmetic on scalars is free to repeat; on a tile value it is not.
            match op
                .args
                .iter()
                .map(value_place)
                .find(|p| *p != Place::Anywhere)
            {
                Some(p) => p,
                None if op.args.iter().any(|a| is_tile_param(k, a)) => Place::On(Core::Vector),
                None => Place::Anywhere,
            }
        }
        _ => Place::On(Core::Vector),
    }
}

pub(crate) fn is_tile_param(k: &Kernel, o: &Operand) -> bool {
    matches!(o, Operand::Param(p) if k.params.iter().any(|q| &q.name == p && matches!(q.ty, ParamType::Tile(..))))
}
