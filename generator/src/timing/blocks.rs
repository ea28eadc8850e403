//! The handshake models of the stream blocks no single layer kind owns:
//! the top level's skid buffer, serializer, fork and join, and the
//! lock-step pipeline of the requantizers and the batch norm. A kind's own
//! blocks live in its module (`crate::layers`).

use super::{OnePort, StreamBlock};

/// A pipeline whose stages advance together (`rtl/fptgen_requant_vec.v`:
/// 6 stages; `rtl/fptgen_bn.v`: 2; one stage is a plain register stage):
/// `in_ready = !out_valid || out_ready`, and on an edge with `in_ready`
/// every stage's valid moves one stage on, the first taking `in_valid`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipe {
    /// Per stage, first to last (the last is `out_valid`).
    valid: Vec<bool>,
}

impl Pipe {
    /// A pipeline of `depth` stages, after reset.
    pub fn new(depth: usize) -> Pipe {
        assert!(depth >= 1);
        Pipe { valid: vec![false; depth] }
    }
}

impl OnePort for Pipe {
    fn in_ready(&self, out_ready: bool) -> bool {
        !self.out_valid() || out_ready
    }

    fn out_valid(&self) -> bool {
        self.valid[self.valid.len() - 1]
    }

    fn clock(&mut self, in_valid: bool, out_ready: bool) {
        if self.in_ready(out_ready) {
            self.valid.rotate_right(1);
            self.valid[0] = in_valid;
        }
    }
}

/// `rtl/fptgen_skid.v`'s handshake: `in_ready_reg`, `out_valid_reg`,
/// `temp_valid_reg` (alexforencich's axis_register, REG_TYPE = 2); its
/// `in_ready` is a register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skid {
    ready: bool,
    out_valid: bool,
    temp_valid: bool,
}

impl Skid {
    /// A skid buffer after reset (empty and ready).
    pub fn new() -> Skid {
        Skid { ready: true, out_valid: false, temp_valid: false }
    }
}

impl Default for Skid {
    fn default() -> Skid {
        Skid::new()
    }
}

impl OnePort for Skid {
    fn in_ready(&self, _out_ready: bool) -> bool {
        self.ready
    }

    fn out_valid(&self) -> bool {
        self.out_valid
    }

    fn clock(&mut self, in_valid: bool, out_ready: bool) {
        let early = out_ready || (!self.temp_valid && (!self.out_valid || !in_valid));
        if self.ready {
            if out_ready || !self.out_valid {
                self.out_valid = in_valid;
            } else {
                self.temp_valid = in_valid;
            }
        } else if out_ready {
            self.out_valid = self.temp_valid;
            self.temp_valid = false;
        }
        self.ready = early;
    }
}

/// `rtl/fptgen_serialize.v`'s handshake: the beat counter and `busy_reg`
/// (`out_valid`): one vector out as `beats` beats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Serialize {
    beats: usize,
    k: usize,
    busy: bool,
}

impl Serialize {
    /// A serializer giving `beats` beats per vector, after reset.
    pub fn new(beats: usize) -> Serialize {
        assert!(beats >= 1);
        Serialize { beats, k: 0, busy: false }
    }
}

impl OnePort for Serialize {
    fn in_ready(&self, out_ready: bool) -> bool {
        !self.busy || (self.k == self.beats - 1 && out_ready)
    }

    fn out_valid(&self) -> bool {
        self.busy
    }

    fn clock(&mut self, in_valid: bool, out_ready: bool) {
        let last = self.k == self.beats - 1;
        if in_valid && self.in_ready(out_ready) {
            self.busy = true;
            self.k = 0;
        } else if self.busy && out_ready {
            self.busy = !last;
            self.k = if last { 0 } else { self.k + 1 };
        }
    }
}

/// `rtl/fptgen_fork.v`'s handshake: one stream to two, each output behind
/// a FIFO; the beats each FIFO holds (`count_i`) and, for sizing, the most
/// each has held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fork {
    depth: [usize; 2],
    count: [usize; 2],
    max: [usize; 2],
}

impl Fork {
    /// A fork with FIFOs of `depth` entries, after reset.
    pub fn new(depth: [usize; 2]) -> Fork {
        assert!(depth[0] >= 1 && depth[1] >= 1);
        Fork { depth, count: [0; 2], max: [0; 2] }
    }

    fn in_ready(&self) -> bool {
        self.count[0] < self.depth[0] && self.count[1] < self.depth[1]
    }
}

impl StreamBlock for Fork {
    fn outputs(&self) -> usize {
        2
    }

    fn in_ready_at(&self, _port: usize, _in_valid: &[bool], _out_ready: &[bool]) -> bool {
        self.in_ready()
    }

    fn out_valid_at(&self, port: usize) -> bool {
        self.count[port] != 0
    }

    fn clock_at(&mut self, in_valid: &[bool], out_ready: &[bool]) {
        let push = in_valid[0] && self.in_ready();
        for ((count, max), &ready) in self.count.iter_mut().zip(&mut self.max).zip(out_ready) {
            let pop = *count != 0 && ready;
            *count = *count + usize::from(push) - usize::from(pop);
            *max = (*max).max(*count);
        }
    }

    fn fifo_fill(&self) -> Option<[usize; 2]> {
        Some(self.max)
    }

    fn boxed(&self) -> Box<dyn StreamBlock> {
        Box::new(self.clone())
    }
}

/// `rtl/fptgen_concat.v`'s handshake: two streams to one beat; `out_valid`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Join {
    out_valid: bool,
}

impl Join {
    /// A join after reset.
    pub fn new() -> Join {
        Join { out_valid: false }
    }

    fn free(&self, out_ready: bool) -> bool {
        !self.out_valid || out_ready
    }
}

impl Default for Join {
    fn default() -> Join {
        Join::new()
    }
}

impl StreamBlock for Join {
    fn inputs(&self) -> usize {
        2
    }

    fn in_ready_at(&self, port: usize, in_valid: &[bool], out_ready: &[bool]) -> bool {
        self.free(out_ready[0]) && in_valid[1 - port]
    }

    fn out_valid_at(&self, _port: usize) -> bool {
        self.out_valid
    }

    fn clock_at(&mut self, in_valid: &[bool], out_ready: &[bool]) {
        let take = in_valid[0] && in_valid[1] && self.free(out_ready[0]);
        self.out_valid = take || (self.out_valid && !out_ready[0]);
    }

    fn boxed(&self) -> Box<dyn StreamBlock> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::{measure, Measured};

    /// A skid buffer passes every beat once and in order under any valid
    /// and ready pattern, never takes a beat it cannot hold, and keeps full
    /// rate; alone, it times as a register stage (a beat valid in the cycle
    /// after the edge that took it).
    #[test]
    fn the_skid_buffer_loses_nothing() {
        for beats in [1, 4] {
            assert_eq!(measure(&[Skid::new().into()], beats, beats, 12), measure(&[Pipe::new(1).into()], beats, beats, 12));
        }
        assert_eq!(measure(&[Skid::new().into()], 1, 1, 12).unwrap().ii, Some(1));
        let mut b = Skid::new();
        let mut held: std::collections::VecDeque<u32> = Default::default();
        let (mut next_in, mut next_out) = (0u32, 0u32);
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let (in_valid, out_ready) = (rng & 3 != 0, rng & 12 != 0);
            assert!(held.len() < 2 || !b.ready, "a full buffer is not ready");
            assert_eq!(b.out_valid, !held.is_empty());
            if b.out_valid && out_ready {
                assert_eq!(held.pop_front(), Some(next_out));
                next_out += 1;
            }
            if in_valid && b.ready {
                held.push_back(next_in);
                next_in += 1;
            }
            b.clock(in_valid, out_ready);
            assert!(held.len() <= 2);
        }
        assert!(next_out > 10_000);
    }

    /// A register stage (a one-stage pipeline) takes a beat every cycle and
    /// outputs it on the next; the serializer's beat k is valid 1 + k
    /// cycles after the vector.
    #[test]
    fn lone_shared_blocks_keep_up_with_their_input() {
        let m = measure(&[Pipe::new(1).into()], 4, 4, 12).unwrap();
        assert_eq!(m, Measured { latency: 3, ii: Some(4) });
        let m = measure(&[Serialize::new(5).into()], 1, 5, 12).unwrap();
        assert_eq!(m, Measured { latency: 4, ii: Some(5) });
    }
}
