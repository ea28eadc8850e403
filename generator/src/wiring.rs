//! The top level's streams: how layers, forks and joins connect.
//!
//! Every stream is three wires `<name>_data`, `<name>_valid`,
//! `<name>_ready` with exactly one producer and one consumer; the network's
//! input is the stream `in` (the ports `in_*`), a layer's output the stream
//! `<layer>_out`. A stream that feeds several consumers goes through forks
//! (`rtl/fptgen_fork.v`, one input to two outputs, each with its FIFO;
//! chained for more), and a layer with several inputs takes them through
//! joins (`rtl/fptgen_concat.v`, two streams to one beat with input 0 in the
//! low bits: the gather order, channel concatenation per pixel; chained for
//! more). Between a layer and a consumer whose ready is not a register (a
//! layer or a join) sits a skid buffer (`rtl/fptgen_skid.v`), so no
//! layer's ready reaches the layer before it combinationally. The same
//! [`Wiring`] renders the top level (`templates/top.v`) and
//! builds the handshake model ([`Wiring::graph`]), so the cycle counts are
//! those of the wires generated.

use serde::Serialize;

use crate::plan::LayerPlan;
use crate::timing::{self, blocks, Block, Graph, Node, Src};

/// Where a layer's input comes from: the network's input, or layer `j`.
pub type Source = Option<usize>;

/// One stream of the top level.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stream {
    /// The wires' prefix.
    pub name: String,
    /// Bits per beat.
    pub bits: usize,
}

/// A fork: one stream to two, each output through its own FIFO.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fork {
    /// Instance name (`u_<name>`).
    pub name: String,
    /// The stream forked.
    pub input: String,
    /// The two copies.
    pub outputs: [String; 2],
    /// Bits per beat.
    pub bits: usize,
    /// FIFO entries of each output.
    pub depth: [usize; 2],
}

/// A join: two streams to one beat, `{input 1, input 0}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Join {
    /// Instance name (`u_<name>`).
    pub name: String,
    /// The two streams joined, input 0 first (low bits).
    pub inputs: [String; 2],
    /// Their bits per beat.
    pub bits: [usize; 2],
    /// The joined stream.
    pub output: String,
}

/// A layer's connections.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LayerWires {
    /// The stream the layer takes.
    pub input: String,
    /// The stream it gives (`<layer>_out`).
    pub output: String,
    /// With a skid buffer (`rtl/fptgen_skid.v`, instance
    /// `u_<layer>_skid`) between the layer and `output`: the stream the
    /// layer's module drives (`<layer>_y`), which the buffer takes.
    pub skid: Option<String>,
}

impl LayerWires {
    /// The stream the layer's module drives: `skid`'s, or `output`.
    pub fn driven(&self) -> &str {
        self.skid.as_deref().unwrap_or(&self.output)
    }
}

/// One part of the top level, in an order where every stream is produced
/// before it is consumed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Fork(usize),
    Join(usize),
    Layer(usize),
}

/// The top level's streams and the forks, joins and layers between them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Wiring {
    /// Every stream but `in` (the input ports), in production order.
    pub streams: Vec<Stream>,
    /// The forks.
    pub forks: Vec<Fork>,
    /// The joins.
    pub joins: Vec<Join>,
    /// Per layer, its connections.
    pub layers: Vec<LayerWires>,
    /// The stream the network outputs.
    pub output: String,
    #[serde(skip)]
    order: Vec<Part>,
}

/// FIFO entries of a fork output before [`Wiring::size_fifos`] sizes them:
/// enough for any of the small graphs fptgen builds to run unstalled.
const UNSIZED: usize = 1 << 20;

impl Wiring {
    /// The wiring of `layers`, layer `i` fed by `sources[i]` in gather
    /// order, the network's input `in_bits` bits per beat; the last layer
    /// is the network's output.
    pub fn new(layers: &[LayerPlan], sources: &[Vec<Source>], in_bits: usize) -> Wiring {
        let mut w = Wiring { streams: Vec::new(), forks: Vec::new(), joins: Vec::new(), layers: Vec::new(), output: String::new(), order: Vec::new() };
        // Consumers of each producer (None: the input), in layer order.
        let producer_name = |p: Source| p.map_or("in".to_string(), |j| format!("{}_out", layers[j].name));
        let producer_bits = |p: Source| p.map_or(in_bits, |j| layers[j].out_beat_bits());
        let uses = |p: Source| sources.iter().flatten().filter(|&&s| s == p).count() + usize::from(p == Some(layers.len() - 1));
        // The stream each use of a producer gets, handed out in order.
        let mut handed: Vec<Vec<String>> = vec![Vec::new(); layers.len() + 1];
        let slot = |p: Source| p.map_or(0, |j| j + 1);
        let fork = |w: &mut Wiring, handed: &mut Vec<Vec<String>>, p: Source| {
            let name = producer_name(p);
            let bits = producer_bits(p);
            let k = uses(p);
            let mut cur = name.clone();
            let mut out = Vec::new();
            for i in 0..k.saturating_sub(1) {
                let a = format!("{name}_f{i}");
                let b = if i + 2 == k { format!("{name}_f{}", i + 1) } else { format!("{name}_r{i}") };
                for s in [&a, &b] {
                    w.streams.push(Stream { name: s.clone(), bits });
                }
                w.forks.push(Fork { name: format!("{name}_fork{i}"), input: cur.clone(), outputs: [a.clone(), b.clone()], bits, depth: [UNSIZED; 2] });
                w.order.push(Part::Fork(w.forks.len() - 1));
                out.push(a);
                cur = b;
            }
            out.push(cur);
            out.reverse(); // handed out by pop()
            handed[slot(p)] = out;
        };
        fork(&mut w, &mut handed, None);
        for (i, l) in layers.iter().enumerate() {
            let mut ins: Vec<(String, usize)> = sources[i]
                .iter()
                .map(|&s| (handed[slot(s)].pop().expect("a stream for every use"), producer_bits(s)))
                .collect();
            let mut input = ins.remove(0);
            for (k, next) in ins.into_iter().enumerate() {
                let out = format!("{}_cat{k}", l.name);
                let bits = input.1 + next.1;
                w.streams.push(Stream { name: out.clone(), bits });
                w.joins.push(Join { name: out.clone(), inputs: [input.0, next.0], bits: [input.1, next.1], output: out.clone() });
                w.order.push(Part::Join(w.joins.len() - 1));
                input = (out, bits);
            }
            let output = format!("{}_out", l.name);
            // A skid buffer registers the ready of every layer boundary
            // whose consumer's ready is not already a register (a fork's
            // is); the network's output port is left as the layer gives it.
            let skid = (uses(Some(i)) == 1 && i + 1 != layers.len()).then(|| format!("{}_y", l.name));
            if let Some(y) = &skid {
                w.streams.push(Stream { name: y.clone(), bits: l.out_beat_bits() });
            }
            w.streams.push(Stream { name: output.clone(), bits: l.out_beat_bits() });
            w.layers.push(LayerWires { input: input.0, output, skid });
            w.order.push(Part::Layer(i));
            fork(&mut w, &mut handed, Some(i));
        }
        w.output = handed[layers.len()].pop().expect("the network's output");
        w
    }

    /// The handshake model of this wiring: every layer's blocks, forks and
    /// joins, connected by the same streams; `input`, if given, is a block
    /// between the network's input port and the stream `in` (the trainer's
    /// serializer).
    pub fn graph(&self, layers: &[LayerPlan], input: Option<Block>) -> Graph {
        let mut nodes: Vec<Node> = Vec::new();
        // The node output that produces each stream.
        let mut at: std::collections::HashMap<&str, Src> = std::collections::HashMap::new();
        at.insert("in", Src::Input);
        if let Some(b) = input {
            nodes.push(Node { block: b, inputs: vec![Src::Input] });
            at.insert("in", Src::Node(0, 0));
        }
        let src = |at: &std::collections::HashMap<&str, Src>, s: &str| *at.get(s).unwrap_or_else(|| panic!("stream {s} is produced before use"));
        for part in &self.order {
            match *part {
                Part::Fork(f) => {
                    let f = &self.forks[f];
                    nodes.push(Node { block: blocks::Fork::new(f.depth).into(), inputs: vec![src(&at, &f.input)] });
                    at.insert(&f.outputs[0], Src::Node(nodes.len() - 1, 0));
                    at.insert(&f.outputs[1], Src::Node(nodes.len() - 1, 1));
                }
                Part::Join(j) => {
                    let j = &self.joins[j];
                    nodes.push(Node { block: blocks::Join::new().into(), inputs: vec![src(&at, &j.inputs[0]), src(&at, &j.inputs[1])] });
                    at.insert(&j.output, Src::Node(nodes.len() - 1, 0));
                }
                Part::Layer(i) => {
                    let mut s = src(&at, &self.layers[i].input);
                    let skid = self.layers[i].skid.is_some().then(|| blocks::Skid::new().into());
                    for b in layers[i].hw().blocks(&layers[i]).into_iter().chain(skid) {
                        nodes.push(Node { block: b, inputs: vec![s] });
                        s = Src::Node(nodes.len() - 1, 0);
                    }
                    at.insert(&self.layers[i].output, s);
                }
            }
        }
        Graph { output: src(&at, &self.output), nodes }
    }
}

impl Wiring {
    /// Sizes every fork's FIFOs from a full-rate run of `vectors` vectors
    /// (`in_beats`, `out_beats` beats each, `input` as in [`Wiring::graph`]):
    /// one entry more than the most it held, at least 2. So the sized
    /// design runs at full rate exactly as with unbounded FIFOs, and every
    /// short branch's FIFO holds at least what the long branch consumes
    /// before its first output, which `rtl/fptgen_fork.v` shows is what
    /// deadlock freedom needs under any back-pressure.
    pub fn size_fifos(&mut self, layers: &[LayerPlan], input: Option<Block>, in_beats: usize, out_beats: usize, vectors: usize) {
        if self.forks.is_empty() {
            return;
        }
        let fill = timing::fork_fill(&self.graph(layers, input), in_beats, out_beats, vectors).expect("every stream block delivers its outputs");
        for (f, m) in self.forks.iter_mut().zip(fill) {
            f.depth = [(m[0] + 1).max(2), (m[1] + 1).max(2)];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layers::flatten::Collect;
    use crate::timing::blocks::{Fork, Serialize};
    use crate::timing::{fork_fill, measure_graph, Measured};

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
                    Node { block: Fork::new([1 << 20; 2]).into(), inputs: vec![Src::Input] },
                    Node { block: Collect::new(k).into(), inputs: vec![Src::Node(0, l)] },
                    Node { block: Serialize::new(k).into(), inputs: vec![Src::Node(1, 0)] },
                    Node { block: blocks::Join::new().into(), inputs: vec![] },
                ],
                output: Src::Node(3, 0),
            };
            g.nodes[3].inputs = if direct_first { vec![Src::Node(0, d), Src::Node(2, 0)] } else { vec![Src::Node(2, 0), Src::Node(0, d)] };
            let fill = fork_fill(&g, 1, 1, 96).unwrap();
            assert_eq!(fill[0][d] + 1, 7, "direct branch first: {direct_first}");
            g.nodes[0].block = Fork::new([(fill[0][0] + 1).max(2), (fill[0][1] + 1).max(2)]).into();
            let m = measure_graph(&g, 1, 1, 96).unwrap();
            assert_eq!(m, Measured { latency: k as u64 + 2, ii: Some(1) });
        }
    }
}
