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
