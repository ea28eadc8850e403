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
//! This module is the runner: the [`StreamBlock`] trait every model
//! implements, the [`Graph`] of blocks the top level wires, and the cycle
//! loop ([`measure`], [`paced`], [`settle`], [`fork_fill`]). The models
//! live with what owns their RTL: a layer kind's blocks in its module
//! (`crate::layers::dense::DenseUnit` for `rtl/fptgen_dense.v`,
//! `conv2d::Swg`, `maxpool2d::Pool`, `flatten::Collect`), the blocks the
//! top level and several kinds share in [`blocks`] (the skid buffer, the
//! serializer, the fork and the join, the lock-step pipeline).
//!
//! Every block is a valid/ready stream stage whose `out_valid` is a
//! register and whose `in_ready` may depend on its `out_ready`
//! combinationally; a chain is evaluated from its end (readies) and then
//! clocked. Each block documents the RTL it models.

pub mod blocks;

use std::fmt;
use std::ops::{Deref, DerefMut};

/// A stream block's handshake model: its ports, their `in_ready` and
/// `out_valid` in the current state, and one rising edge. Implement
/// [`OnePort`] instead for a block with one input and one output.
pub trait StreamBlock: fmt::Debug + Send + Sync {
    /// Input ports (1, or 2 for a join).
    fn inputs(&self) -> usize {
        1
    }

    /// Output ports (1, or 2 for a fork).
    fn outputs(&self) -> usize {
        1
    }

    /// The longest the block works without a handshake (a dense unit's
    /// folds), 1 for most: the runner's patience before it calls a graph
    /// stuck.
    fn folds(&self) -> u64 {
        1
    }

    /// `in_ready` of input `port`, given the valids of every input and the
    /// readies of every output.
    fn in_ready_at(&self, port: usize, in_valid: &[bool], out_ready: &[bool]) -> bool;

    /// `out_valid` of output `port` (a register in every block).
    fn out_valid_at(&self, port: usize) -> bool;

    /// One rising edge, every port's handshake given.
    fn clock_at(&mut self, in_valid: &[bool], out_ready: &[bool]);

    /// The most beats each of the block's two FIFOs has held since reset
    /// (a fork, for sizing them: [`fork_fill`]); None for other blocks.
    fn fifo_fill(&self) -> Option<[usize; 2]> {
        None
    }

    /// A copy of the block in its current state.
    fn boxed(&self) -> Box<dyn StreamBlock>;
}

/// A stream block with one input and one output: its [`StreamBlock`]
/// follows from these.
pub trait OnePort: Clone + fmt::Debug + Send + Sync + 'static {
    /// `in_ready` for the given `out_ready` in the current state.
    fn in_ready(&self, out_ready: bool) -> bool;

    /// `out_valid` in the current state.
    fn out_valid(&self) -> bool;

    /// One rising edge with these handshake inputs.
    fn clock(&mut self, in_valid: bool, out_ready: bool);

    /// As [`StreamBlock::folds`].
    fn folds(&self) -> u64 {
        1
    }
}

impl<T: OnePort> StreamBlock for T {
    fn folds(&self) -> u64 {
        OnePort::folds(self)
    }

    fn in_ready_at(&self, _port: usize, _in_valid: &[bool], out_ready: &[bool]) -> bool {
        self.in_ready(out_ready[0])
    }

    fn out_valid_at(&self, _port: usize) -> bool {
        self.out_valid()
    }

    fn clock_at(&mut self, in_valid: &[bool], out_ready: &[bool]) {
        self.clock(in_valid[0], out_ready[0]);
    }

    fn boxed(&self) -> Box<dyn StreamBlock> {
        Box::new(self.clone())
    }
}

/// One RTL stream block's handshake state, of any kind of block (its model
/// as a [`StreamBlock`]). `model.into()` makes one.
#[derive(Debug)]
pub struct Block(Box<dyn StreamBlock>);

impl<T: StreamBlock + 'static> From<T> for Block {
    fn from(model: T) -> Block {
        Block(Box::new(model))
    }
}

impl Clone for Block {
    fn clone(&self) -> Block {
        Block(self.0.boxed())
    }
}

impl Deref for Block {
    type Target = dyn StreamBlock;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl DerefMut for Block {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut *self.0
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
#[derive(Debug, Clone)]
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
#[derive(Debug, Clone)]
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
    Some(nodes.iter().filter_map(|n| n.block.fifo_fill()).collect())
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
