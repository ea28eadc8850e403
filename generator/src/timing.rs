//! The exact cycle model of the generated pipeline: one handshake model per
//! RTL stream block, chained as the generated top level chains them, run
//! cycle by cycle.
//!
//! Dense layers alone have a closed form (`crate::layers::dense`), but a
//! convolution's sliding-window generator, a pool or a flatten collector
//! produce and take beats in bursts, and the interval between images of a
//! chain of them has none. So the report's cycle counts come from running
//! this model exactly as the co-simulation harness runs the hardware
//! (`templates/harness.cpp`, phase A): every block's `in_ready` and
//! `out_valid` are the RTL's, from the same registers, and [`measure`]
//! feeds beats and records outputs with the harness's conventions. The
//! co-simulation compares the measured numbers with these, so a block
//! model that drifts from its RTL fails CI.
//!
//! Every block is a valid/ready stream stage whose `out_valid` is a
//! register and whose `in_ready` may depend on its `out_ready`
//! combinationally; a chain is evaluated from its end (readies) and then
//! clocked. Each block documents the RTL it models.

/// One RTL stream block's handshake state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    /// `rtl/fptgen_dense.v`: a vector occupies the issue stage for `folds`
    /// (`NF * SF`) cycles; `depth` pipeline registers (1 for the in-order
    /// chain, more for the adder tree), then the output register.
    Dense(Dense),
    /// `rtl/fptgen_swg.v`: the 3x3 sliding-window generator.
    Swg(Swg),
    /// `rtl/fptgen_maxpool.v`: 2x2 max-pooling, stride 2.
    MaxPool(MaxPool),
    /// `rtl/fptgen_flatten.v`: collects `beats` beats into one vector.
    Collect(Collect),
    /// One register stage (`rtl/fptgen_bn.v`).
    Stage(Stage),
    /// `rtl/fptgen_serialize.v`: one vector out as `beats` beats.
    Serialize(Serialize),
    /// `rtl/fptgen_fork.v`: one stream to two, each output behind a FIFO.
    Fork(Fork),
    /// `rtl/fptgen_concat.v`: two streams to one beat.
    Join(Join),
    /// `rtl/fptgen_requant_vec.v`: a pipeline whose stages advance
    /// together.
    Pipe(Pipe),
    /// `rtl/fptgen_skid.v`: a skid buffer, whose `in_ready` is a register.
    Skid(Skid),
}

impl Block {
    /// `fptgen_dense` with `folds = NF * SF` folds and `depth` pipeline
    /// stages between the issue stage and the output register (s1 and,
    /// with an adder tree, its stages: `DensePlan::depth`), after reset.
    pub fn dense(folds: u64, depth: usize) -> Block {
        assert!(folds >= 1 && depth >= 1);
        Block::Dense(Dense { folds, busy: false, k: 0, stages: vec![(false, false); depth], out_valid: false })
    }

    /// `fptgen_swg` for an `h x w` image, stride 1 or 2, same (true) or
    /// valid padding, after reset.
    pub fn swg(h: usize, w: usize, stride: usize, same: bool) -> Block {
        Block::Swg(Swg { h, w, stride, same, x: 0, y: 0, pend: false, out_valid: false })
    }

    /// `fptgen_maxpool` for an `h x w` image, after reset.
    pub fn maxpool(h: usize, w: usize) -> Block {
        Block::MaxPool(MaxPool { h, w, x: 0, y: 0, out_valid: false })
    }

    /// `fptgen_flatten` collecting `beats` beats per vector, after reset.
    pub fn collect(beats: usize) -> Block {
        assert!(beats >= 1);
        Block::Collect(Collect { beats, k: 0, out_valid: false })
    }

    /// A register stage, after reset.
    pub fn stage() -> Block {
        Block::Stage(Stage { out_valid: false })
    }

    /// `fptgen_serialize` giving `beats` beats per vector, after reset.
    pub fn serialize(beats: usize) -> Block {
        assert!(beats >= 1);
        Block::Serialize(Serialize { beats, k: 0, busy: false })
    }

    /// `fptgen_fork` with FIFOs of `depth` entries, after reset.
    pub fn fork(depth: [usize; 2]) -> Block {
        assert!(depth[0] >= 1 && depth[1] >= 1);
        Block::Fork(Fork { depth, count: [0; 2], max: [0; 2] })
    }

    /// `fptgen_concat`, after reset.
    pub fn join() -> Block {
        Block::Join(Join { out_valid: false })
    }

    /// A pipeline of `depth` stages that advance together
    /// (`fptgen_requant_vec`: 6), after reset.
    pub fn pipe(depth: usize) -> Block {
        assert!(depth >= 1);
        Block::Pipe(Pipe { valid: vec![false; depth] })
    }

    /// `fptgen_skid`, after reset (empty and ready).
    pub fn skid() -> Block {
        Block::Skid(Skid { ready: true, out_valid: false, temp_valid: false })
    }

    /// Input ports (1, or 2 for a join).
    pub fn inputs(&self) -> usize {
        if let Block::Join(_) = self {
            2
        } else {
            1
        }
    }

    /// Output ports (1, or 2 for a fork).
    pub fn outputs(&self) -> usize {
        if let Block::Fork(_) = self {
            2
        } else {
            1
        }
    }

    /// The folds of a dense block, 1 for the others: the longest a block
    /// works without a handshake.
    fn folds(&self) -> u64 {
        if let Block::Dense(d) = self {
            d.folds
        } else {
            1
        }
    }

    /// `in_ready` of input `port`, given the valids of every input and the
    /// readies of every output.
    pub fn in_ready_at(&self, port: usize, in_valid: &[bool], out_ready: &[bool]) -> bool {
        match self {
            Block::Fork(f) => f.in_ready(),
            Block::Join(j) => j.free(out_ready[0]) && in_valid[1 - port],
            _ => self.in_ready(out_ready[0]),
        }
    }

    /// `out_valid` of output `port`.
    pub fn out_valid_at(&self, port: usize) -> bool {
        match self {
            Block::Fork(f) => f.count[port] != 0,
            _ => self.out_valid(),
        }
    }

    /// One rising edge, every port's handshake given.
    pub fn clock_at(&mut self, in_valid: &[bool], out_ready: &[bool]) {
        match self {
            Block::Fork(f) => f.clock(in_valid[0], out_ready),
            Block::Join(j) => j.clock(in_valid, out_ready[0]),
            _ => self.clock(in_valid[0], out_ready[0]),
        }
    }

    /// `in_ready` for the given `out_ready` in the current state.
    pub fn in_ready(&self, out_ready: bool) -> bool {
        match self {
            Block::Dense(b) => b.in_ready(out_ready),
            Block::Swg(b) => b.in_ready(out_ready),
            Block::MaxPool(b) => b.in_ready(out_ready),
            Block::Collect(b) => b.in_ready(out_ready),
            Block::Stage(b) => b.in_ready(out_ready),
            Block::Serialize(b) => b.in_ready(out_ready),
            Block::Pipe(b) => b.in_ready(out_ready),
            Block::Skid(b) => b.ready,
            Block::Fork(_) | Block::Join(_) => unreachable!("a fork or join has its own ports (in_ready_at)"),
        }
    }

    /// `out_valid` in the current state (a register in every block).
    pub fn out_valid(&self) -> bool {
        match self {
            Block::Dense(b) => b.out_valid,
            Block::Swg(b) => b.out_valid,
            Block::MaxPool(b) => b.out_valid,
            Block::Collect(b) => b.out_valid,
            Block::Stage(b) => b.out_valid,
            Block::Serialize(b) => b.busy,
            Block::Pipe(b) => b.out_valid(),
            Block::Skid(b) => b.out_valid,
            Block::Fork(_) => unreachable!("a fork has two outputs (out_valid_at)"),
            Block::Join(j) => j.out_valid,
        }
    }

    /// One rising edge with these handshake inputs.
    pub fn clock(&mut self, in_valid: bool, out_ready: bool) {
        match self {
            Block::Dense(b) => b.clock(in_valid, out_ready),
            Block::Swg(b) => b.clock(in_valid, out_ready),
            Block::MaxPool(b) => b.clock(in_valid, out_ready),
            Block::Collect(b) => b.clock(in_valid, out_ready),
            Block::Stage(b) => b.clock(in_valid, out_ready),
            Block::Serialize(b) => b.clock(in_valid, out_ready),
            Block::Pipe(b) => b.clock(in_valid, out_ready),
            Block::Skid(b) => b.clock(in_valid, out_ready),
            Block::Fork(_) | Block::Join(_) => unreachable!("a fork or join has its own ports (clock_at)"),
        }
    }
}

/// `fptgen_dense`'s handshake: `busy_reg`, the fold counter (`nf_reg`,
/// `sf_reg` as one index), each pipeline stage's valid and done flags
/// (`s1_valid_reg`, `s1_done_reg`, then the tree's `c_valid_reg`,
/// `c_done_reg`; the last stage is the RTL's `fin_*`), `out_valid_reg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dense {
    folds: u64,
    busy: bool,
    k: u64,
    /// (valid, done) of each stage after the issue stage, s1 first.
    stages: Vec<(bool, bool)>,
    out_valid: bool,
}

impl Dense {
    /// The final stage's valid and done flags.
    fn fin(&self) -> (bool, bool) {
        *self.stages.last().expect("at least one stage")
    }

    fn stall(&self, out_ready: bool) -> bool {
        let (valid, done) = self.fin();
        valid && done && self.out_valid && !out_ready
    }

    fn issue_last(&self) -> bool {
        self.busy && self.k == self.folds - 1
    }

    fn in_ready(&self, out_ready: bool) -> bool {
        !self.stall(out_ready) && (!self.busy || self.issue_last())
    }

    fn clock(&mut self, in_valid: bool, out_ready: bool) {
        if self.stall(out_ready) {
            return; // out_ready is low: out_valid stays high
        }
        let accept = in_valid && self.in_ready(out_ready);
        let issue_last = self.issue_last();
        let (fin_valid, fin_done) = self.fin();
        self.out_valid = if fin_valid && fin_done { true } else { self.out_valid && !out_ready };
        self.stages.pop();
        self.stages.insert(0, (self.busy, self.k == self.folds - 1));
        if self.busy {
            self.k = (self.k + 1) % self.folds;
        }
        self.busy = accept || (self.busy && !issue_last);
    }
}

/// `fptgen_swg`'s handshake: the step position (`x_reg`, `y_reg`, whose
/// flags the RTL keeps in registers), `pend_reg`, `out_valid_reg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Swg {
    h: usize,
    w: usize,
    stride: usize,
    same: bool,
    x: usize,
    y: usize,
    pend: bool,
    out_valid: bool,
}

impl Swg {
    /// Padding before (top or left) of a dimension of `n` values: the RTL's
    /// `PT` / `PL`.
    fn pad_before(&self, n: usize) -> usize {
        if !self.same {
            return 0;
        }
        let out = n.div_ceil(self.stride);
        ((out - 1) * self.stride + 3).saturating_sub(n) / 2
    }

    /// Step rows per image (`YS`): a row of bottom padding steps with same
    /// padding and stride 1.
    fn rows(&self) -> usize {
        self.h + usize::from(self.vrow_exists())
    }

    fn vrow_exists(&self) -> bool {
        self.same && self.stride == 1
    }

    fn fires(&self, v: usize, n: usize, first: usize, edge: bool) -> bool {
        (v >= first && (self.stride == 1 || v % 2 == first % 2)) || (edge && v == n - 1)
    }

    fn fire(&self) -> bool {
        let edge_x = self.same && (self.stride == 2 || self.w == 1);
        let edge_y = self.same && self.stride == 2;
        self.fires(self.x, self.w, 2 - self.pad_before(self.w), edge_x)
            && self.fires(self.y, self.h, 2 - self.pad_before(self.h), edge_y)
    }

    fn vrow(&self) -> bool {
        self.vrow_exists() && self.y == self.h
    }

    fn dbl_x(&self) -> bool {
        self.vrow_exists() && self.w >= 2 && self.x == self.w - 1
    }

    fn can_step(&self, out_ready: bool) -> bool {
        let out_free = !self.out_valid || out_ready;
        out_free || !(self.pend || self.fire())
    }

    fn in_ready(&self, out_ready: bool) -> bool {
        self.can_step(out_ready) && !self.vrow()
    }

    fn clock(&mut self, in_valid: bool, out_ready: bool) {
        let out_free = !self.out_valid || out_ready;
        let step = self.can_step(out_ready) && (self.vrow() || in_valid);
        let load_step = step && self.fire();
        let load_pend = self.pend && out_free;
        let dbl = self.dbl_x();
        self.out_valid = if load_step || load_pend { true } else { self.out_valid && !out_ready };
        if load_pend {
            self.pend = false;
        } else if load_step && dbl {
            self.pend = true;
        }
        if step {
            if self.x == self.w - 1 {
                self.x = 0;
                self.y = if self.y == self.rows() - 1 { 0 } else { self.y + 1 };
            } else {
                self.x += 1;
            }
        }
    }
}

/// `fptgen_maxpool`'s handshake: the pixel position and `out_valid_reg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaxPool {
    h: usize,
    w: usize,
    x: usize,
    y: usize,
    out_valid: bool,
}

impl MaxPool {
    fn done(&self) -> bool {
        self.x % 2 == 1 && self.y % 2 == 1
    }

    fn in_ready(&self, out_ready: bool) -> bool {
        !self.done() || !self.out_valid || out_ready
    }

    fn clock(&mut self, in_valid: bool, out_ready: bool) {
        let accept = in_valid && self.in_ready(out_ready);
        self.out_valid = if accept && self.done() { true } else { self.out_valid && !out_ready };
        if accept {
            if self.x == self.w - 1 {
                self.x = 0;
                self.y = if self.y == self.h - 1 { 0 } else { self.y + 1 };
            } else {
                self.x += 1;
            }
        }
    }
}

/// `fptgen_flatten`'s handshake: the beat counter and `out_valid_reg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collect {
    beats: usize,
    k: usize,
    out_valid: bool,
}

impl Collect {
    fn in_ready(&self, out_ready: bool) -> bool {
        !(self.k == self.beats - 1 && self.out_valid && !out_ready)
    }

    fn clock(&mut self, in_valid: bool, out_ready: bool) {
        let accept = in_valid && self.in_ready(out_ready);
        let last = self.k == self.beats - 1;
        self.out_valid = if accept && last { true } else { self.out_valid && !out_ready };
        if accept {
            self.k = if last { 0 } else { self.k + 1 };
        }
    }
}

/// One register stage: `in_ready = !out_valid_reg || out_ready`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stage {
    out_valid: bool,
}

impl Stage {
    fn in_ready(&self, out_ready: bool) -> bool {
        !self.out_valid || out_ready
    }

    fn clock(&mut self, in_valid: bool, out_ready: bool) {
        let accept = in_valid && self.in_ready(out_ready);
        self.out_valid = accept || (self.out_valid && !out_ready);
    }
}

/// A pipeline whose stages advance together (`fptgen_requant_vec`):
/// `in_ready = !out_valid || out_ready`, and on an edge with `in_ready`
/// every stage's valid moves one stage on, the first taking `in_valid`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipe {
    /// Per stage, first to last (the last is `out_valid`).
    valid: Vec<bool>,
}

impl Pipe {
    fn out_valid(&self) -> bool {
        self.valid[self.valid.len() - 1]
    }

    fn in_ready(&self, out_ready: bool) -> bool {
        !self.out_valid() || out_ready
    }

    fn clock(&mut self, in_valid: bool, out_ready: bool) {
        if self.in_ready(out_ready) {
            self.valid.rotate_right(1);
            self.valid[0] = in_valid;
        }
    }
}

/// `fptgen_skid`'s handshake: `in_ready_reg`, `out_valid_reg`,
/// `temp_valid_reg` (alexforencich's axis_register, REG_TYPE = 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skid {
    ready: bool,
    out_valid: bool,
    temp_valid: bool,
}

impl Skid {
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

/// `fptgen_serialize`'s handshake: the beat counter and `busy_reg`
/// (`out_valid`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Serialize {
    beats: usize,
    k: usize,
    busy: bool,
}

impl Serialize {
    fn in_ready(&self, out_ready: bool) -> bool {
        !self.busy || (self.k == self.beats - 1 && out_ready)
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

/// `fptgen_fork`'s handshake: the beats each FIFO holds (`count_i`); and,
/// for sizing, the most each has held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fork {
    depth: [usize; 2],
    count: [usize; 2],
    max: [usize; 2],
}

impl Fork {
    fn in_ready(&self) -> bool {
        self.count[0] < self.depth[0] && self.count[1] < self.depth[1]
    }

    fn clock(&mut self, in_valid: bool, out_ready: &[bool]) {
        let push = in_valid && self.in_ready();
        for ((count, max), &ready) in self.count.iter_mut().zip(&mut self.max).zip(out_ready) {
            let pop = *count != 0 && ready;
            *count = *count + usize::from(push) - usize::from(pop);
            *max = (*max).max(*count);
        }
    }
}

/// `fptgen_concat`'s handshake: `out_valid`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Join {
    out_valid: bool,
}

impl Join {
    fn free(&self, out_ready: bool) -> bool {
        !self.out_valid || out_ready
    }

    fn clock(&mut self, in_valid: &[bool], out_ready: bool) {
        let take = in_valid[0] && in_valid[1] && self.free(out_ready);
        self.out_valid = take || (self.out_valid && !out_ready);
    }
}

/// What [`measure`] found: the harness's latency and initiation interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measured {
    /// Edges from the edge that accepts the first beat of vector 0 to the
    /// cycle in which the last beat of its output is valid.
    pub latency: u64,
    /// The interval between the last output beats of successive vectors in
    /// the second half of the run, or None if it is not constant there.
    pub ii: Option<u64>,
}

/// Runs `blocks` (fresh from reset, chained in order) as the harness's
/// phase A does: `vectors` vectors of `in_beats` beats each offered back to
/// back with `in_valid` high, `out_ready` held high, until `vectors`
/// vectors of `out_beats` beats have come out. None if the chain stops
/// moving before (a model error).
pub fn measure(blocks: &[Block], in_beats: usize, out_beats: usize, vectors: usize) -> Option<Measured> {
    measure_graph(&Graph::chain(blocks.to_vec()), in_beats, out_beats, vectors)
}

/// [`measure`] on a graph of blocks.
pub fn measure_graph(graph: &Graph, in_beats: usize, out_beats: usize, vectors: usize) -> Option<Measured> {
    let (first_accept, done_at) = run(graph, in_beats, out_beats, vectors, None)?;
    let latency = done_at[0].checked_sub(first_accept)?;
    let mut ii = None;
    let mut steady = true;
    for k in done_at.len() / 2 + 1..done_at.len() {
        let d = done_at[k] - done_at[k - 1];
        if *ii.get_or_insert(d) != d {
            steady = false;
        }
    }
    Some(Measured { latency, ii: if steady { ii } else { None } })
}

/// The ES trainer's evaluation of its `vectors` buffered samples through
/// `blocks` (whole vectors in, one beat each, and out): the sample buffer
/// presents sample 0 on the first cycle and sample k + 1 `interval` cycles
/// after sample k is taken (`rtl/fptgen_sample_buf.v`), the outputs are
/// always taken. Returns the edges from the edge that takes sample 0 to the
/// cycle in which the last output is valid: `(M - 1) * II + latency` for a
/// pipeline that takes every sample at once.
pub fn paced(blocks: &[Block], vectors: usize, interval: u64) -> Option<u64> {
    paced_graph(&Graph::chain(blocks.to_vec()), vectors, interval)
}

/// [`paced`] on a graph of blocks.
pub fn paced_graph(graph: &Graph, vectors: usize, interval: u64) -> Option<u64> {
    let (first_accept, done_at) = run(graph, 1, 1, vectors, Some(interval))?;
    done_at.last()?.checked_sub(first_accept)
}

/// Where a stream comes from: the network's input, or output `port` of
/// node `node` of a [`Graph`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Src {
    /// The network's input port.
    Input,
    /// An output port of a node.
    Node(usize, usize),
}

/// Who takes a stream: input `port` of node `node` as `(node, port)`, or
/// None for the network's output.
type Consumer = Option<(usize, usize)>;

/// A block and the sources of its input ports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The block's handshake state.
    pub block: Block,
    /// One source per input port.
    pub inputs: Vec<Src>,
}

/// Stream blocks wired as the generated top level wires them: nodes in
/// topological order (a node's inputs come from the input or earlier
/// nodes), every stream consumed exactly once (a stream that feeds two
/// consumers goes through a fork block), and the network's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    /// The nodes.
    pub nodes: Vec<Node>,
    /// The stream the network outputs.
    pub output: Src,
}

impl Graph {
    /// `blocks` one after the other.
    pub fn chain(blocks: Vec<Block>) -> Graph {
        let n = blocks.len();
        let nodes = blocks
            .into_iter()
            .enumerate()
            .map(|(i, block)| Node { block, inputs: vec![if i == 0 { Src::Input } else { Src::Node(i - 1, 0) }] })
            .collect();
        Graph { nodes, output: if n == 0 { Src::Input } else { Src::Node(n - 1, 0) } }
    }

    /// The consumer of every stream: `(node, port)`, or None for the
    /// network's output. Panics on a stream consumed twice or never (a
    /// construction error).
    fn consumers(&self) -> (Consumer, Vec<Vec<Consumer>>) {
        // Some(c): consumed by c (None: the network's output).
        type Slot = Option<Option<(usize, usize)>>;
        let mut input_to: Slot = None;
        let mut of_node: Vec<Vec<Slot>> = self.nodes.iter().map(|n| vec![None; n.block.outputs()]).collect();
        let mut take = |src: Src, c: Option<(usize, usize)>| {
            let slot = match src {
                Src::Input => &mut input_to,
                Src::Node(n, p) => &mut of_node[n][p],
            };
            assert!(slot.is_none(), "{src:?} is consumed once");
            *slot = Some(c);
        };
        for (i, node) in self.nodes.iter().enumerate() {
            for (p, &src) in node.inputs.iter().enumerate() {
                take(src, Some((i, p)));
            }
        }
        take(self.output, None);
        let of_node = of_node
            .into_iter()
            .enumerate()
            .map(|(n, ports)| ports.into_iter().map(|c| c.unwrap_or_else(|| panic!("an output of node {n} is not used"))).collect())
            .collect();
        (input_to.expect("the input is used"), of_node)
    }
}

/// The cycle loop of [`measure`] and [`paced`]: the edge after the first
/// accepted beat, and the cycle in which each output vector's last beat is
/// valid.
fn run(graph: &Graph, in_beats: usize, out_beats: usize, vectors: usize, pace: Option<u64>) -> Option<(u64, Vec<u64>)> {
    run_nodes(graph, in_beats, out_beats, vectors, pace).map(|(a, d, _)| (a, d))
}

/// The most beats each fork's FIFOs held when `vectors` vectors stream
/// through `graph` at full rate (as [`measure`] runs it), per fork node in
/// node order.
pub fn fork_fill(graph: &Graph, in_beats: usize, out_beats: usize, vectors: usize) -> Option<Vec<[usize; 2]>> {
    let (_, _, nodes) = run_nodes(graph, in_beats, out_beats, vectors, None)?;
    Some(nodes.iter().filter_map(|n| if let Block::Fork(f) = &n.block { Some(f.max) } else { None }).collect())
}

/// [`run`], also returning the nodes' final state.
fn run_nodes(graph: &Graph, in_beats: usize, out_beats: usize, vectors: usize, pace: Option<u64>) -> Option<(u64, Vec<u64>, Vec<Node>)> {
    let mut nodes = graph.nodes.clone();
    let (input_to, consumer) = graph.consumers();
    let total_in = vectors * in_beats;
    let total_out = vectors * out_beats;
    // A graph that stops moving is a model error: no handshake anywhere for
    // longer than any block works on its own (a dense layer's folds).
    let patience = 65_536 + 4 * nodes.iter().map(|n| n.block.folds()).max().unwrap_or(1);
    let mut last_event = 0u64;
    let (mut sent, mut recv) = (0usize, 0usize);
    let mut first_accept: Option<u64> = None;
    let mut done_at: Vec<u64> = Vec::with_capacity(vectors);
    let mut valid_from = 0u64;
    let mut cycle = 0u64;
    let mut ready_in: Vec<Vec<bool>> = nodes.iter().map(|n| vec![false; n.inputs.len()]).collect();
    while recv < total_out {
        if cycle - last_event > patience {
            return None;
        }
        let in_valid = sent < total_in && cycle >= valid_from;
        let valid = |nodes: &[Node], s: Src| match s {
            Src::Input => in_valid,
            Src::Node(n, p) => nodes[n].block.out_valid_at(p),
        };
        let in_valids: Vec<Vec<bool>> = nodes.iter().map(|n| n.inputs.iter().map(|&s| valid(&nodes, s)).collect()).collect();
        // Readies from the consumers back (the harness's out_ready is high).
        let mut out_readies: Vec<Vec<bool>> = nodes.iter().map(|n| vec![true; n.block.outputs()]).collect();
        for i in (0..nodes.len()).rev() {
            for (p, c) in consumer[i].iter().enumerate() {
                out_readies[i][p] = c.is_none_or(|(m, q)| ready_in[m][q]);
            }
            let block = &nodes[i].block;
            for (p, r) in ready_in[i].iter_mut().enumerate() {
                *r = block.in_ready_at(p, &in_valids[i], &out_readies[i]);
            }
        }
        let in_ready = input_to.is_none_or(|(m, q)| ready_in[m][q]);
        let take_in = in_valid && in_ready;
        let out_valid = valid(&nodes, graph.output);
        if out_valid {
            recv += 1;
            if recv % out_beats == 0 {
                done_at.push(cycle);
            }
        }
        let moved = (0..nodes.len()).any(|i| (0..nodes[i].inputs.len()).any(|p| in_valids[i][p] && ready_in[i][p]));
        if out_valid || take_in || moved {
            last_event = cycle;
        }
        for (i, node) in nodes.iter_mut().enumerate() {
            node.block.clock_at(&in_valids[i], &out_readies[i]);
        }
        if take_in {
            if let Some(p) = pace {
                valid_from = cycle + p;
            }
        }
        cycle += 1;
        if take_in {
            first_accept.get_or_insert(cycle);
            sent += 1;
        }
    }
    Some((first_accept?, done_at, nodes))
}


/// The fewest vectors, starting from `min`, for which [`measure`] finds a
/// constant interval (doubling up to 4096): the number of vectors the
/// harness streams in its timing phase, and the measurement.
pub fn settle(blocks: &[Block], in_beats: usize, out_beats: usize, min: usize) -> (usize, Measured) {
    settle_graph(&Graph::chain(blocks.to_vec()), in_beats, out_beats, min)
}

/// [`settle`] on a graph of blocks.
pub fn settle_graph(graph: &Graph, in_beats: usize, out_beats: usize, min: usize) -> (usize, Measured) {
    let mut v = min.max(2);
    loop {
        let m = measure_graph(graph, in_beats, out_beats, v).expect("every stream block delivers its outputs");
        if m.ii.is_some() || v >= 4096 {
            return (v, m);
        }
        v *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dense layers `(folds, depth)` as the top level chains them, a skid
    /// buffer between two layers.
    fn dense_chain(layers: &[(u64, usize)]) -> Vec<Block> {
        let mut blocks = Vec::new();
        for (i, &(f, depth)) in layers.iter().enumerate() {
            if i > 0 {
                blocks.push(Block::skid());
            }
            blocks.push(Block::dense(f, depth));
        }
        blocks
    }

    /// A chain of dense layers has the closed form of `layers::dense`:
    /// II = the largest fold count, latency = sum(folds + depth) + 2 *
    /// (layers - 1) (a hand-over and a skid buffer between two layers),
    /// depth 1 for the in-order chain and more for an adder tree.
    #[test]
    fn dense_chains_have_the_closed_form() {
        let chains: &[&[(u64, usize)]] = &[
            &[(1, 1)],
            &[(7, 1)],
            &[(1, 1), (1, 1)],
            &[(3, 1), (5, 1), (2, 1)],
            &[(4, 1), (4, 1)],
            &[(10, 1), (1, 1), (6, 1), (6, 1), (1, 1)],
            &[(1, 3)],
            &[(1, 5), (1, 3)],
            &[(3, 4), (5, 1), (2, 6)],
            &[(10, 1), (1, 5), (6, 3), (6, 1), (1, 4)],
        ];
        for layers in chains {
            let m = measure(&dense_chain(layers), 1, 1, 2 * layers.len() + 8).unwrap();
            let ii = layers.iter().map(|l| l.0).max().unwrap();
            let latency: u64 = layers.iter().map(|&(f, d)| f + d as u64).sum::<u64>() + 2 * (layers.len() as u64 - 1);
            assert_eq!(m, Measured { latency, ii: Some(ii) }, "layers {layers:?}");
        }
    }

    /// A skid buffer passes every beat once and in order under any valid
    /// and ready pattern, never takes a beat it cannot hold, and keeps full
    /// rate; alone, it times as a register stage (a beat valid in the cycle
    /// after the edge that took it).
    #[test]
    fn the_skid_buffer_loses_nothing() {
        for beats in [1, 4] {
            assert_eq!(measure(&[Block::skid()], beats, beats, 12), measure(&[Block::stage()], beats, beats, 12));
        }
        assert_eq!(measure(&[Block::skid()], 1, 1, 12).unwrap().ii, Some(1));
        let Block::Skid(mut b) = Block::skid() else { unreachable!() };
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

    /// The trainer's paced evaluation of a dense chain takes
    /// `(M - 1) * II + latency` edges (`train_plan`'s closed form).
    #[test]
    fn paced_dense_chains_have_the_closed_form() {
        for layers in [&[(3u64, 1usize), (5, 1), (2, 1)][..], &[(1, 1)], &[(4, 1), (4, 1)], &[(3, 4), (5, 1), (2, 6)], &[(1, 3)]] {
            let blocks = dense_chain(layers);
            let ii = layers.iter().map(|l| l.0).max().unwrap();
            let latency: u64 = layers.iter().map(|&(f, d)| f + d as u64).sum::<u64>() + 2 * (layers.len() as u64 - 1);
            for m in [1, 2, 7] {
                assert_eq!(paced(&blocks, m, ii), Some((m as u64 - 1) * ii + latency), "layers {layers:?} M {m}");
            }
        }
    }

    /// A lone stream block at full rate takes an image every `H * W` cycles
    /// (the pool, the collector, the register stage) and outputs one cycle
    /// after the beat that completes an output.
    #[test]
    fn lone_blocks_keep_up_with_their_input() {
        let (h, w) = (6, 5);
        let m = measure(&[Block::maxpool(h, w)], h * w, (h / 2) * (w / 2), 12).unwrap();
        assert_eq!(m.ii, Some((h * w) as u64));
        // The last output pixel needs pixel (2*OH - 1, 2*OW - 1), accepted
        // (2*OH - 1)*W + 2*OW - 1 edges after the first, and is valid in
        // the cycle after (rtl/fptgen_maxpool.v's cycle model).
        assert_eq!(m.latency, (((h / 2) * 2 - 1) * w + (w / 2) * 2 - 1) as u64);
        let m = measure(&[Block::collect(9)], 9, 1, 12).unwrap();
        assert_eq!(m, Measured { latency: 8, ii: Some(9) });
        let m = measure(&[Block::stage()], 4, 4, 12).unwrap();
        assert_eq!(m, Measured { latency: 3, ii: Some(4) });
        // The serializer's beat k is valid 1 + k cycles after the vector.
        let m = measure(&[Block::serialize(5)], 1, 5, 12).unwrap();
        assert_eq!(m, Measured { latency: 4, ii: Some(5) });
    }

    /// The window generator's images follow each other every `YS * W`
    /// cycles (rtl/fptgen_swg.v's cycle model), for every stride and
    /// padding, and its last window comes one cycle after the step that
    /// completes it.
    #[test]
    fn the_window_generator_follows_its_documented_cycle_model() {
        for (h, w) in [(3, 3), (5, 4), (4, 7), (8, 8), (1, 1), (2, 5)] {
            for stride in [1, 2] {
                for same in [false, true] {
                    if !same && (h < 3 || w < 3) {
                        continue;
                    }
                    let out = |n: usize| if same { n.div_ceil(stride) } else { (n - 3) / stride + 1 };
                    let windows = out(h) * out(w);
                    let m = measure(&[Block::swg(h, w, stride, same)], h * w, windows, 12).unwrap();
                    let ys = h + usize::from(same && stride == 1);
                    assert_eq!(m.ii, Some((ys * w) as u64), "{h}x{w} stride {stride} same {same}");
                    // The last window (OH - 1, OW - 1) is output the cycle
                    // after the step (sy, sx) that completes it, or, as the
                    // second window of a row (same, stride 1), W steps
                    // after that row's first step.
                    let pad = |n: usize| if same { ((out(n) - 1) * stride + 3).saturating_sub(n) / 2 } else { 0 };
                    let last = |n: usize| ((out(n) - 1) * stride + 2 - pad(n)).min(n - 1);
                    let latency = if same && stride == 1 {
                        if w >= 2 { h * w + w } else { h * w }
                    } else {
                        last(h) * w + last(w)
                    };
                    assert_eq!(m.latency, latency as u64, "{h}x{w} stride {stride} same {same}");
                }
            }
        }
    }

    /// A fork whose outputs rejoin, one branch direct, the other
    /// `flatten(K) -> serialize(K)` (the graph of
    /// generator/tests/rtl/fork.rs): the model sizes the direct branch's
    /// FIFO at the depth that testbench found to give full rate (7 for
    /// K = 4: the fork test's "full-rate depth"), and then beat n comes out
    /// K + 2 edges after beat n is accepted, as it measured (output n on
    /// cycle n + K + 3).
    #[test]
    fn a_rejoined_fork_is_sized_for_full_rate() {
        let k = 4;
        for direct_first in [true, false] {
            let (d, l) = if direct_first { (0, 1) } else { (1, 0) };
            let mut g = Graph {
                nodes: vec![
                    Node { block: Block::fork([1 << 20; 2]), inputs: vec![Src::Input] },
                    Node { block: Block::collect(k), inputs: vec![Src::Node(0, l)] },
                    Node { block: Block::serialize(k), inputs: vec![Src::Node(1, 0)] },
                    Node { block: Block::join(), inputs: vec![] },
                ],
                output: Src::Node(3, 0),
            };
            g.nodes[3].inputs = if direct_first { vec![Src::Node(0, d), Src::Node(2, 0)] } else { vec![Src::Node(2, 0), Src::Node(0, d)] };
            let fill = fork_fill(&g, 1, 1, 96).unwrap();
            assert_eq!(fill[0][d] + 1, 7, "direct branch first: {direct_first}");
            g.nodes[0].block = Block::fork([(fill[0][0] + 1).max(2), (fill[0][1] + 1).max(2)]);
            let m = measure_graph(&g, 1, 1, 96).unwrap();
            assert_eq!(m, Measured { latency: k as u64 + 2, ii: Some(1) });
        }
    }
}
