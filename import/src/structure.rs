//! The graph's structure, checked before anything is mapped: each tensor
//! written once, every tensor read is written (by a node, an initializer
//! or a graph input), no cycle, nodes in topological order (as ONNX's
//! checker requires), and every graph output computed. A node whose
//! results reach no graph output (a dead branch) is a warning naming it:
//! ONNX's checker accepts such graphs, and QONNX's cleanup removes those
//! nodes.

use std::collections::HashMap;
use std::path::Path;

use super::error::ImportError;
use super::onnx::{GraphProto, NodeProto};

/// Who writes a tensor.
#[derive(Clone, Copy)]
enum Writer<'a> {
    Input,
    Initializer,
    Node(usize, &'a NodeProto),
}

fn describe(w: Writer<'_>) -> String {
    match w {
        Writer::Input => "the graph input".to_string(),
        Writer::Initializer => "an initializer".to_string(),
        Writer::Node(_, n) => format!("node {}", node_name(n)),
    }
}

fn node_name(n: &NodeProto) -> String {
    format!("'{}' ({})", n.name, n.op_type)
}

/// The graph without its dead nodes, and the warning that names them.
pub struct Checked {
    /// `g` with only the nodes some graph output depends on (`None`: all
    /// of them, nothing removed).
    pub pruned: Option<GraphProto>,
    /// The warnings (dead nodes).
    pub warnings: Vec<String>,
}

/// Checks the structure of `g` (from `file`); returns the graph without
/// its dead nodes with the warning naming them, or the first error,
/// located at the node at fault.
pub fn check(file: &Path, g: &GraphProto) -> Result<Checked, ImportError> {
    // Each tensor's one writer. An initializer may also be listed as a
    // graph input (older ONNX exports do so): that is one tensor.
    let mut writers: HashMap<&str, Writer<'_>> = HashMap::new();
    for t in &g.initializer {
        writers.insert(t.name.as_str(), Writer::Initializer);
    }
    for i in &g.input {
        writers.entry(i.name.as_str()).or_insert(Writer::Input);
    }
    for (k, n) in g.node.iter().enumerate() {
        for o in n.output.iter().filter(|o| !o.is_empty()) {
            if let Some(&w) = writers.get(o.as_str()) {
                return Err(ImportError::node(
                    file,
                    n,
                    format!("writes tensor '{o}', which {} writes too; a tensor has one writer in ONNX", describe(w)),
                ));
            }
            writers.insert(o.as_str(), Writer::Node(k, n));
        }
    }
    // Every tensor read is written; a reader before its writer is a cycle
    // (named with its nodes) or a file out of topological order.
    let mut deps: Vec<Vec<usize>> = vec![Vec::new(); g.node.len()];
    let mut late: Option<(usize, &str, usize)> = None;
    for (k, n) in g.node.iter().enumerate() {
        for i in n.input.iter().filter(|i| !i.is_empty()) {
            match writers.get(i.as_str()) {
                None => {
                    return Err(ImportError::node(file, n, format!("reads tensor '{i}', which no node, initializer or graph input writes")));
                }
                Some(&Writer::Node(w, _)) => {
                    deps[k].push(w);
                    if w >= k && late.is_none() {
                        late = Some((k, i.as_str(), w));
                    }
                }
                Some(_) => {}
            }
        }
    }
    if let Some(cycle) = find_cycle(&deps) {
        let names: Vec<String> = cycle.iter().map(|&k| node_name(&g.node[k])).collect();
        return Err(ImportError::file(file, format!("the graph has a cycle: {} -> {}", names.join(" -> "), names[0])));
    }
    if let Some((k, t, w)) = late {
        return Err(ImportError::node(
            file,
            &g.node[k],
            format!("reads tensor '{t}' before node {} writes it: ONNX requires the nodes in topological order", node_name(&g.node[w])),
        ));
    }
    for o in &g.output {
        if !writers.contains_key(o.name.as_str()) {
            return Err(ImportError::file(file, format!("the graph output '{}' is written by no node", o.name)));
        }
    }
    // Dead nodes: those from which no graph output is reached.
    let mut live = vec![false; g.node.len()];
    let mut stack: Vec<usize> = g
        .output
        .iter()
        .filter_map(|o| match writers.get(o.name.as_str()) {
            Some(&Writer::Node(k, _)) => Some(k),
            _ => None,
        })
        .collect();
    while let Some(k) = stack.pop() {
        if !std::mem::replace(&mut live[k], true) {
            stack.extend(deps[k].iter().copied());
        }
    }
    let dead: Vec<String> = g.node.iter().zip(&live).filter(|(_, &l)| !l).map(|(n, _)| node_name(n)).collect();
    let mut warnings = Vec::new();
    let mut pruned = None;
    if !dead.is_empty() {
        let mut p = g.clone();
        p.node = g.node.iter().zip(&live).filter(|(_, &l)| l).map(|(n, _)| n.clone()).collect();
        pruned = Some(p);
        warnings.push(format!(
            "{}: {} {} no graph output depends on, so {} not imported: {}",
            file.display(),
            dead.len(),
            if dead.len() == 1 { "node computes a result" } else { "nodes compute results" },
            if dead.len() == 1 { "it is" } else { "they are" },
            dead.join(", ")
        ));
    }
    Ok(Checked { pruned, warnings })
}

/// A cycle of the graph whose node `k` depends on `deps[k]`, as the nodes
/// on it in order, if there is one.
fn find_cycle(deps: &[Vec<usize>]) -> Option<Vec<usize>> {
    // Iterative depth-first search: 0 unvisited, 1 on the path, 2 done.
    let mut state = vec![0u8; deps.len()];
    for start in 0..deps.len() {
        if state[start] != 0 {
            continue;
        }
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = 1;
        while let Some(top) = path.last_mut() {
            let k = top.0;
            if top.1 < deps[k].len() {
                let d = deps[k][top.1];
                top.1 += 1;
                match state[d] {
                    0 => {
                        state[d] = 1;
                        path.push((d, 0));
                    }
                    1 => {
                        // d is on the path: the cycle runs from d to k, and
                        // each node depends on the one after it; name them
                        // in the order data flows.
                        let at = path.iter().position(|&(n, _)| n == d).expect("on the path");
                        let mut cycle: Vec<usize> = path[at..].iter().map(|&(n, _)| n).collect();
                        cycle.reverse();
                        return Some(cycle);
                    }
                    _ => {}
                }
            } else {
                state[k] = 2;
                path.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::find_cycle;

    #[test]
    fn cycles_are_found_with_their_nodes() {
        // 0 <- 1 <- 2 <- 0 (node k depends on deps[k]), and 3 apart.
        let c = find_cycle(&[vec![2], vec![0], vec![1], vec![]]).expect("a cycle");
        let mut sorted = c.clone();
        sorted.sort();
        assert_eq!(sorted, [0, 1, 2]);
        // Data flows 0 -> 1 -> 2 -> 0: each next node depends on the one before.
        for w in 0..c.len() {
            let (a, b) = (c[w], c[(w + 1) % c.len()]);
            assert!([vec![2], vec![0], vec![1]][b].contains(&a), "{c:?}");
        }
        assert_eq!(find_cycle(&[vec![], vec![0], vec![0, 1]]), None);
        assert_eq!(find_cycle(&[vec![0]]), Some(vec![0]));
    }
}
