/*
 * fptgen RTL library: the one definition of clog2, the width of an index or
 * address, included inside the body of every module that derives a width
 * from its sizes (`include "fptgen_clog2.vh"; the generated build scripts
 * put rtl/ on the include path). Verilog-2001 has no $clog2 (Verilog-2005),
 * so it is a constant function; it is called at elaboration only, also in
 * port declarations before the include (a constant function may be called
 * before its declaration).
 *
 * clog2(n) = ceil(log2(n)), at least 1: the bits that hold 0 .. n - 1
 * (clog2(1) = clog2(2) = 1, clog2(3) = clog2(4) = 2, clog2(5) = 3). The
 * generator computes the same with fptgen_generator::plan::clog2 where a
 * generated port's width depends on it.
 *
 * tree_nodes and tree_offset lay out a binary adder tree over n leaves
 * (fptgen_dense's and fptgen_loss_acc's): the nodes of one level, and the
 * index of a level's first node when the levels are numbered in a row
 * from the leaves (level 0) up.
 */
function integer clog2;
    input integer value;
    integer v;
    begin
        clog2 = 1;
        v = value - 1;
        while (v > 1) begin
            clog2 = clog2 + 1;
            v = v >> 1;
        end
    end
endfunction

function integer tree_nodes;
    input integer n;
    input integer level;
    begin
        tree_nodes = (n + (1 << level) - 1) >> level;
    end
endfunction

function integer tree_offset;
    input integer n;
    input integer level;
    integer v;
    begin
        tree_offset = 0;
        for (v = 0; v < level; v = v + 1) begin
            tree_offset = tree_offset + tree_nodes(n, v);
        end
    end
endfunction
