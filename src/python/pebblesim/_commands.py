"""The commands as functions, one keyword parameter an option.

Written by src/python/gen_commands.py from `pebblesim __complete table`:
do not edit (make check-python compares it with the table).
"""

import os
from collections.abc import Sequence

from ._core import Trace, call

# the version of pebblesim these functions were written from
VERSION = '0.1.0'

# (parameter, option as the command line has it, check)
OPTIONS = {
    'run': (
        ('n', '-n', 'size'),
        ('d', '-d', 'count'),
        ('g', '-g', 'count'),
        ('M', '-M', 'size'),
        ('no_normalize', '--no-normalize', 'flag'),
        ('causal', '--causal', 'flag'),
        ('decode', '--decode', 'size'),
        ('attention', '--attention', 'string'),
        ('case', '--case', 'string'),
        ('strategy', '--strategy', 'string'),
        ('w', '--w', 'count'),
        ('tiles', '--tiles', 'string'),
        ('sizes', '--sizes', 'string'),
        ('layout', '--layout', 'string'),
        ('dag', '--dag', 'file'),
        ('dag_format', '--dag-format', 'string'),
        ('ignore_weights', '--ignore-weights', 'flag'),
        ('time_limit', '--time-limit', 'real'),
        ('order', '--order', 'string'),
        ('dry_run', '--dry-run', 'flag'),
        ('element_path', '--element-path', 'flag'),
        ('trace', '--trace', 'file'),
        ('trace_detail', '--trace-detail', 'string'),
        ('values', '--values', 'flag'),
        ('q', '--q', 'file'),
        ('k', '--k', 'file'),
        ('v', '--v', 'file'),
        ('seed', '--seed', 'count'),
        ('entry_bound', '--entry-bound', 'real'),
        ('polynomial', '--polynomial', 'string'),
        ('interval', '--interval', 'real'),
        ('output', '--output', 'file'),
        ('trace_limit', '--trace-limit', 'size'),
        ('progress', '--progress', 'flag'),
        ('plugin', '--plugin', 'file'),
    ),
    'compare': (
        ('n', '-n', 'size'),
        ('d', '-d', 'count'),
        ('g', '-g', 'count'),
        ('M', '-M', 'size'),
        ('no_normalize', '--no-normalize', 'flag'),
        ('causal', '--causal', 'flag'),
        ('decode', '--decode', 'size'),
        ('dag', '--dag', 'file'),
        ('dag_format', '--dag-format', 'string'),
        ('ignore_weights', '--ignore-weights', 'flag'),
        ('strategies', '--strategies', 'list'),
        ('predict', '--predict', 'flag'),
        ('jobs', '-j', 'count'),
        ('progress', '--progress', 'flag'),
        ('plugin', '--plugin', 'file'),
    ),
    'sweep': (
        ('n', '-n', 'size'),
        ('d', '-d', 'size'),
        ('g', '-g', 'size'),
        ('M', '-M', 'size'),
        ('no_normalize', '--no-normalize', 'flag'),
        ('causal', '--causal', 'flag'),
        ('decode', '--decode', 'size'),
        ('strategies', '--strategies', 'list'),
        ('baseline', '--baseline', 'string'),
        ('predict', '--predict', 'flag'),
        ('refine', '--refine', 'flag'),
        ('jobs', '-j', 'count'),
        ('shard', '--shard', 'string'),
        ('csv', '--csv', 'file'),
        ('plot', '--plot', 'file'),
        ('plot_script', '--plot-script', 'file'),
        ('merge', '--merge', 'files'),
        ('partial', '--partial', 'flag'),
        ('progress', '--progress', 'flag'),
        ('values', '--values', 'flag'),
        ('seed', '--seed', 'count'),
        ('entry_bound', '--entry-bound', 'real'),
        ('polynomial', '--polynomial', 'string'),
        ('interval', '--interval', 'real'),
        ('plugin', '--plugin', 'file'),
    ),
    'frontier': (
        ('n', '-n', 'size'),
        ('d', '-d', 'count'),
        ('M', '-M', 'size'),
        ('causal', '--causal', 'flag'),
        ('decode', '--decode', 'size'),
        ('epsilon', '--epsilon', 'real'),
        ('bound', '--bound', 'string'),
        ('entry_bound', '--entry-bound', 'real'),
        ('q', '--q', 'file'),
        ('k', '--k', 'file'),
        ('v', '--v', 'file'),
        ('seed', '--seed', 'count'),
        ('polynomial', '--polynomial', 'string'),
        ('interval', '--interval', 'real'),
        ('csv', '--csv', 'file'),
        ('plot', '--plot', 'file'),
        ('plot_script', '--plot-script', 'file'),
        ('progress', '--progress', 'flag'),
    ),
    'optimal': (
        ('n', '-n', 'size'),
        ('d', '-d', 'count'),
        ('g', '-g', 'count'),
        ('M', '-M', 'size'),
        ('no_normalize', '--no-normalize', 'flag'),
        ('attention', '--attention', 'string'),
        ('dag', '--dag', 'file'),
        ('dag_format', '--dag-format', 'string'),
        ('ignore_weights', '--ignore-weights', 'flag'),
        ('time_limit', '--time-limit', 'real'),
        ('memory_limit', '--memory-limit', 'size'),
        ('trace', '--trace', 'file'),
        ('sweep', '--sweep', 'flag'),
    ),
    'list': (
        ('plugin', '--plugin', 'file'),
    ),
    'validate': (
        ('M', '-M', 'size'),
        ('n', '-n', 'size'),
        ('d', '-d', 'count'),
        ('g', '-g', 'count'),
        ('no_normalize', '--no-normalize', 'flag'),
        ('causal', '--causal', 'flag'),
        ('decode', '--decode', 'size'),
        ('dag', '--dag', 'file'),
        ('dag_format', '--dag-format', 'string'),
        ('ignore_weights', '--ignore-weights', 'flag'),
        ('element_path', '--element-path', 'flag'),
        ('max_moves', '--max-moves', 'size'),
        ('values', '--values', 'flag'),
        ('q', '--q', 'file'),
        ('k', '--k', 'file'),
        ('v', '--v', 'file'),
        ('seed', '--seed', 'count'),
        ('entry_bound', '--entry-bound', 'real'),
        ('polynomial', '--polynomial', 'string'),
        ('interval', '--interval', 'real'),
        ('output', '--output', 'file'),
        ('progress', '--progress', 'flag'),
    ),
}


def run(
    *,
    n: int | str | None = None,
    d: int | None = None,
    g: int | None = None,
    M: int | str | None = None,
    no_normalize: bool = False,
    causal: bool = False,
    decode: int | str | None = None,
    attention: str | None = None,
    case: str | None = None,
    strategy: str | None = None,
    w: int | None = None,
    tiles: str | None = None,
    sizes: str | None = None,
    layout: str | None = None,
    dag: str | os.PathLike | None = None,
    dag_format: str | None = None,
    ignore_weights: bool = False,
    time_limit: float | None = None,
    order: str | None = None,
    dry_run: bool = False,
    element_path: bool = False,
    trace: str | os.PathLike | None = None,
    trace_detail: str | None = None,
    values: bool = False,
    q: str | os.PathLike | None = None,
    k: str | os.PathLike | None = None,
    v: str | os.PathLike | None = None,
    seed: int | None = None,
    entry_bound: float | None = None,
    polynomial: str | None = None,
    interval: float | None = None,
    output: str | os.PathLike | None = None,
    trace_limit: int | str | None = None,
    progress: bool = False,
    plugin: str | os.PathLike | None = None,
) -> dict:
    """`pebblesim run ... --json`: build the DAG, run a strategy, validate
    every move, report (the default).

    Returns the document `pebblesim run ... --json` prints, parsed
    (docs/pebblesim.schema.json). False and None leave an option out;
    a value of the wrong type raises TypeError, a NUL byte ValueError,
    each naming the option; the command's own refusal raises
    PebblesimError.

    Options:
    n: -n N: rows of Q, K, V (the sequence length), N >= 1
    d: -d D: features (columns of Q, K, V), D >= 1
    g: -g G: degree of the polynomial replacing exp, 0 <= G <= 64; U1 and U2
        have r = C(D+G, G) columns
    M: -M M: fast memory capacity in words (red pebbles), M >= 1
    no_normalize: --no-normalize: compute U1 (U2^T V) without the normaliser
        column and D^-1: the outputs are N instead of A
    causal: --causal: causal attention (MODEL.md section 7): row i sees keys
        j <= i only, as in a decoder model's prefill
    decode: --decode P: token-by-token decoding (MODEL.md section 8, with
        --causal): rows P..n-1 generated one at a time after a prompt of P
        rows, 1 <= P < n; a run's I/O is also given per token
    attention: --attention KIND: approx (the default): approximate
        attention, n, d, g; exact: exact attention (MODEL.md section 5), n
        and d, no -g; flash by default. Naming a strategy of exact attention
        (flash, exact-matmul) implies it (one of: approx, exact)
    case: --case C: I, II, III, IV or auto (the default): the algorithm of
        the theorem of the paper's case C: I caseI, II keylemma, III generic
        (or subtile where Lemma 3.3's premise holds, the cheaper), IV
        generic or matmul, the cheaper; auto classifies the parameters
        first. Outside its case's condition the algorithm still runs, with a
        warning. The cases are of the non-causal DAG: with --causal, best
        runs (auto only) (one of: I, II, III, IV, auto)
    strategy: --strategy NAME: a strategy by name, overriding --case
        (`pebblesim list`); best runs the one with the least predicted I/O;
        with --dag, lru (the default), belady, or best (or portfolio): the
        least I/O of belady and lru over nine orders and a local search,
        naming the member that won
    w: --w W: keylemma, best: the generating set size (g <= W <= D, W tau(W)
        <= M/4; with --sizes tuned any W from g to D) instead of the
        cheapest
    tiles: --tiles SHAPE: generic, best: square, tall or unit instead of the
        cheapest (one of: square, tall, unit)
    sizes: --sizes S: caseI, generic, keylemma, subtile, matmul: proof (the
        default: the proof's M/4 sizes and its upper bound) or tuned (each
        tile size chosen by the cost model within M; no bound is claimed)
        (one of: proof, tuned)
    layout: --layout L: colpass: rect-dup, rect-save or tail instead of the
        cheapest that fits M (one of: rect-dup, rect-save, tail)
    dag: --dag FILE: a DAG from a file (GraphML, GML, an edge list, .hdag or
        a lower-triangular .mtx; - for standard input) instead of the
        attention DAG: -n, -d, -g, --case, --w, --tiles, --sizes, --layout
        do not apply
    dag_format: --dag-format F: graphml, gml, edgelist, hdag (HyperdagDB) or
        mtx (a lower-triangular Matrix Market matrix): the format of --dag
        FILE; without it the content tells (standard input too) (one of:
        graphml, gml, edgelist, hdag, mtx)
    ignore_weights: --ignore-weights: read a HyperdagDB file's comm and mem
        weights as 1 (the game is unit-weight; without it other weights are
        refused); the report says so
    time_limit: --time-limit S: best on a DAG from a file: the local
        search's budget in seconds (default 3)
    order: --order O: lru, belady: topo (igraph's topological sort, the
        default) or dfs (depth-first post-order from the outputs) (one of:
        topo, dfs)
    dry_run: --dry-run: print the sizes, the memory a run would take, the
        case, the plan and its predicted I/O, without validating
    element_path: --element-path: validate move by move, without the block
        path (the same verdicts, slower: for cross-checks)
    trace: --trace FILE: write the sequence as JSON Lines, one set operation
        a line (docs/TRACE_FORMAT.md); - for standard output (the report
        then goes to standard error)
    trace_detail: --trace-detail D: set (the default) or elementary: one
        line per move (one of: set, elementary)
    values: --values: run with numbers (docs/VALUES.md): the outputs, their
        distance to a direct evaluation, and epsilon = max |A - softmax(Q
        K^T / sqrt d) V|
    q: --q Q.npy: read Q (n x d, float64 or float32) from a .npy file; --q,
        --k and --v go together; run takes -n and -d from their shape when
        they are not given
    k: --k K.npy: read K (n x d, float64 or float32) from a .npy file; --q,
        --k and --v go together; run takes -n and -d from their shape when
        they are not given
    v: --v V.npy: read V (n x d, float64 or float32) from a .npy file; --q,
        --k and --v go together; run takes -n and -d from their shape when
        they are not given
    seed: --seed S: random inputs from seed S (default 1)
    entry_bound: --entry-bound B: random inputs uniform in [-B, B] (default
        1)
    polynomial: --polynomial P: taylor (the default), chebyshev or minimax:
        the polynomial P of degree g replacing exp (one of: taylor,
        chebyshev, minimax)
    interval: --interval BETA: P approximates exp on [-BETA, BETA] (default
        B^2 sqrt d, B the entry bound or the largest |entry| of Q and K)
    output: --output A.npy: write the outputs (A, or N or O without
        normalisation) as an n x d float64 .npy file (--decode P: the n - P
        generated rows)
    trace_limit: --trace-limit N: refuse a trace of more than N lines,
        counted before anything is written (default 20000000 lines, a
        gigabyte or two); 0 for no limit
    progress: --progress: progress on standard error even when it is not a
        terminal (a batch job's log): a line naming the strategy and the
        point every 10 s of a long run
    plugin: --plugin FILE.so: load strategies from a plugin
        (docs/EXTENDING.md); its code runs in pebblesim, its moves are
        validated
    """
    return call('run', OPTIONS['run'], locals())


def compare(
    *,
    n: int | str | None = None,
    d: int | None = None,
    g: int | None = None,
    M: int | str | None = None,
    no_normalize: bool = False,
    causal: bool = False,
    decode: int | str | None = None,
    dag: str | os.PathLike | None = None,
    dag_format: str | None = None,
    ignore_weights: bool = False,
    strategies: str | Sequence[str] | None = None,
    predict: bool = False,
    jobs: int | None = None,
    progress: bool = False,
    plugin: str | os.PathLike | None = None,
) -> list:
    """`pebblesim compare ... --json`: every strategy on the same DAG
    through the engine, side by side, best first.

    Returns the document `pebblesim compare ... --json` prints, parsed
    (docs/pebblesim.schema.json). False and None leave an option out;
    a value of the wrong type raises TypeError, a NUL byte ValueError,
    each naming the option; the command's own refusal raises
    PebblesimError.

    Options:
    n: -n N: rows of Q, K, V (the sequence length), N >= 1
    d: -d D: features (columns of Q, K, V), D >= 1
    g: -g G: degree of the polynomial replacing exp, 0 <= G <= 64; U1 and U2
        have r = C(D+G, G) columns
    M: -M M: fast memory capacity in words (red pebbles), M >= 1
    no_normalize: --no-normalize: compute U1 (U2^T V) without the normaliser
        column and D^-1: the outputs are N instead of A
    causal: --causal: causal attention (MODEL.md section 7): row i sees keys
        j <= i only, as in a decoder model's prefill
    decode: --decode P: token-by-token decoding (MODEL.md section 8, with
        --causal): rows P..n-1 generated one at a time after a prompt of P
        rows, 1 <= P < n; a run's I/O is also given per token
    dag: --dag FILE: compare the policies for a DAG from a file instead: lru
        and belady, each over the topo and dfs orders, and portfolio
        (best's, a 3 s search)
    dag_format: --dag-format F: graphml, gml, edgelist, hdag (HyperdagDB) or
        mtx (a lower-triangular Matrix Market matrix): the format of --dag
        FILE; without it the content tells (standard input too) (one of:
        graphml, gml, edgelist, hdag, mtx)
    ignore_weights: --ignore-weights: read a HyperdagDB file's comm and mem
        weights as 1 (the game is unit-weight; without it other weights are
        refused); the report says so
    strategies: --strategies LIST: only these rows: comma-separated names (a
        tiling's name gives its row and its tuned row); a baseline named
        here runs at any size. Default: every row
    predict: --predict: cost models only, no engine (rows without one say
        so): for sizes too big to simulate
    jobs: -j N: rows in N parallel processes (default 1: a row's seconds are
        then its own); the counts are those of -j 1
    progress: --progress: progress on standard error even when it is not a
        terminal (a batch job's log): a line naming each row as it starts,
        and every 10 s of a long one
    plugin: --plugin FILE.so: load strategies from a plugin
        (docs/EXTENDING.md); its code runs in pebblesim, its moves are
        validated
    """
    return call('compare', OPTIONS['compare'], locals())


def sweep(
    *,
    n: int | str | None = None,
    d: int | str | None = None,
    g: int | str | None = None,
    M: int | str | None = None,
    no_normalize: bool = False,
    causal: bool = False,
    decode: int | str | None = None,
    strategies: str | Sequence[str] | None = None,
    baseline: str | None = None,
    predict: bool = False,
    refine: bool = False,
    jobs: int | None = None,
    shard: str | None = None,
    csv: str | os.PathLike | None = None,
    plot: str | os.PathLike | None = None,
    plot_script: str | os.PathLike | None = None,
    merge: Sequence[str | os.PathLike] | None = None,
    partial: bool = False,
    progress: bool = False,
    values: bool = False,
    seed: int | None = None,
    entry_bound: float | None = None,
    polynomial: str | None = None,
    interval: float | None = None,
    plugin: str | os.PathLike | None = None,
) -> dict:
    """`pebblesim sweep ... --json`: one parameter over a range, every
    listed strategy at every point.

    Returns the document `pebblesim sweep ... --json` prints, parsed
    (docs/pebblesim.schema.json). False and None leave an option out;
    a value of the wrong type raises TypeError, a NUL byte ValueError,
    each naming the option; the command's own refusal raises
    PebblesimError.

    Options:
    n: -n V: rows, or a range of them: LO:HI, LO:HI:xK, LO:HI:+K (k, M, G
        and 2^k allowed)
    d: -d V: features, or a range
    g: -g V: degree, or a range (approximate attention; exact attention has
        none)
    M: -M V: fast memory, or a range
    no_normalize: --no-normalize: compute U1 (U2^T V) without the normaliser
        column and D^-1: the outputs are N instead of A
    causal: --causal: causal attention (MODEL.md section 7): row i sees keys
        j <= i only, as in a decoder model's prefill
    decode: --decode P: token-by-token decoding (MODEL.md section 8, with
        --causal): rows P..n-1 generated one at a time after a prompt of P
        rows, 1 <= P < n; a run's I/O is also given per token
    strategies: --strategies LIST: comma-separated names across both DAGs:
        case (the case's algorithm at each point), best, flash, keylemma,
        ...; default case,best,flash
    baseline: --baseline NAME: the strategy crossovers are measured against
        (default flash; decoding, flash-decode)
    predict: --predict: cost models only, no engine: for sizes too big to
        simulate
    refine: --refine: find each end of a crossover's intervals exactly, by
        bisection on the cost models between grid points (n, d, g; M's ends
        stay on the grid)
    jobs: -j N: points in N parallel processes (default: the cores); the
        results are those of -j 1
    shard: --shard K/N: run every N-th point, from the K-th (1 <= K <= N)
    csv: --csv FILE: write one row per (point, strategy) as CSV, ending with
        the loads and saves of each array (Q_loads, ...)
    plot: --plot FILE: draw I/O against the swept parameter into FILE.svg,
        FILE.png or FILE.pdf, with gnuplot (log axes for n, M, P and I/O,
        linear for d and g; I/O per generated token where the sweep is of
        decoding)
    plot_script: --plot-script FILE.gp: write the plot's gnuplot script and
        its data (FILE.dat) beside it, to restyle: `gnuplot FILE.gp` in that
        directory draws the plot's name (or FILE.svg)
    merge: --merge: join the CSV files given as arguments (shards) instead
        of running: refuses files of different sweeps, a shard twice, a
        point twice and a missing shard, by name (the files, a list)
    partial: --partial: with --merge: a partial merge is intended (shards
        may be missing; the CSV written records it as partial)
    progress: --progress: progress on standard error even when it is not a
        terminal (a batch job's log): a line per run done, naming the
        strategy and the point
    values: --values: run every simulated point with numbers (random inputs,
        docs/VALUES.md): epsilon = max |A - softmax(Q K^T/sqrt d) V| beside
        the I/O in the table, CSV, JSON and plot
    seed: --seed S: random inputs from seed S (default 1)
    entry_bound: --entry-bound B: random inputs uniform in [-B, B] (default
        1)
    polynomial: --polynomial P: taylor (the default), chebyshev or minimax:
        the polynomial P of degree g replacing exp (one of: taylor,
        chebyshev, minimax)
    interval: --interval BETA: P approximates exp on [-BETA, BETA] (default
        B^2 sqrt d, B the entry bound or the largest |entry| of Q and K)
    plugin: --plugin FILE.so: load strategies from a plugin
        (docs/EXTENDING.md); its code runs in pebblesim, its moves are
        validated
    """
    return call('sweep', OPTIONS['sweep'], locals())


def frontier(
    *,
    n: int | str | None = None,
    d: int | None = None,
    M: int | str | None = None,
    causal: bool = False,
    decode: int | str | None = None,
    epsilon: float | None = None,
    bound: str | None = None,
    entry_bound: float | None = None,
    q: str | os.PathLike | None = None,
    k: str | os.PathLike | None = None,
    v: str | os.PathLike | None = None,
    seed: int | None = None,
    polynomial: str | None = None,
    interval: float | None = None,
    csv: str | os.PathLike | None = None,
    plot: str | os.PathLike | None = None,
    plot_script: str | os.PathLike | None = None,
    progress: bool = False,
) -> dict:
    """`pebblesim frontier ... --json`: the least I/O at an accuracy:
    approximate attention against FlashAttention.

    Returns the document `pebblesim frontier ... --json` prints, parsed
    (docs/pebblesim.schema.json). False and None leave an option out;
    a value of the wrong type raises TypeError, a NUL byte ValueError,
    each naming the option; the command's own refusal raises
    PebblesimError.

    Options:
    n: -n N: rows: a range LO:HI, LO:HI:xK or LO:HI:+K (k, M, G, 2^k)
    d: -d D: features (columns of Q, K, V), D >= 1
    M: -M M: fast memory, words
    causal: --causal: causal attention (MODEL.md section 7): row i sees keys
        j <= i only, as in a decoder model's prefill
    decode: --decode P: token-by-token decoding after a prompt of P rows
        (MODEL.md section 8, with --causal; every n of the range above P):
        best among the decode strategies against flash-decode, I/O also per
        generated token; epsilon is per step
    epsilon: --epsilon E: the accuracy: max |A - softmax(Q K^T / sqrt d) V|
        <= E; --decode: at every generated row t, |A[t] - softmax of the
        same q_t over the same keys and values j <= t|
    bound: --bound HOW: a-priori (the default): the least g whose bound 2
        eta / (1 + sqrt(1 - eta^2)) B on the interval is within E; measured:
        the least g whose epsilon measured on the inputs (--q, --k, --v, or
        random ones) is within E (one of: a-priori, measured)
    entry_bound: --entry-bound B: entries of Q, K and V in [-B, B] (default
        1); measured: random inputs uniform in [-B, B]
    q: --q Q.npy: --bound measured: Q (rows x d) from a .npy file; --q, --k
        and --v go together, not with --decode
    k: --k K.npy: --bound measured: K from a .npy file
    v: --v V.npy: --bound measured: V from a .npy file
    seed: --seed S: --bound measured: random inputs from seed S (default 1),
        min(the largest n, 4096) rows; --decode: a prompt of min(P, 4096)
        rows, min(HI - P, 1024) generated rows
    polynomial: --polynomial P: taylor (the default), chebyshev or minimax:
        the polynomial P of degree g replacing exp (one of: taylor,
        chebyshev, minimax)
    interval: --interval BETA: P approximates exp on [-BETA, BETA] (default
        B^2 sqrt d, B the entry bound or the largest |entry| of Q and K)
    csv: --csv FILE: write best's and flash's rows as sweep's CSV
    plot: --plot FILE: draw I/O against n into FILE.svg, FILE.png or
        FILE.pdf (gnuplot), best's points marked with the chosen g
    plot_script: --plot-script FILE.gp: write the plot's gnuplot script and
        its data (FILE.dat) beside it, to restyle: `gnuplot FILE.gp` in that
        directory draws the plot's name (or FILE.svg)
    progress: --progress: progress on standard error even when it is not a
        terminal (a batch job's log): a line per point and per plan of the
        bisection
    """
    return call('frontier', OPTIONS['frontier'], locals())


def optimal(
    *,
    n: int | str | None = None,
    d: int | None = None,
    g: int | None = None,
    M: int | str | None = None,
    no_normalize: bool = False,
    attention: str | None = None,
    dag: str | os.PathLike | None = None,
    dag_format: str | None = None,
    ignore_weights: bool = False,
    time_limit: float | None = None,
    memory_limit: int | str | None = None,
    trace: str | os.PathLike | None = None,
    sweep: bool = False,
) -> dict:
    """`pebblesim optimal ... --json`: the exact least I/O of a small
    instance by search, beside every strategy and bound.

    Returns the document `pebblesim optimal ... --json` prints, parsed
    (docs/pebblesim.schema.json). False and None leave an option out;
    a value of the wrong type raises TypeError, a NUL byte ValueError,
    each naming the option; the command's own refusal raises
    PebblesimError.

    Options:
    n: -n N: rows of Q, K, V; the search takes DAGs of at most 1024 nodes
        that hold pebbles (n <= 3 or so)
    d: -d D: features (columns of Q, K, V), D >= 1
    g: -g G: degree of the polynomial replacing exp, 0 <= G <= 64; U1 and U2
        have r = C(D+G, G) columns
    M: -M M: fast memory capacity in words (red pebbles), M >= 1
    no_normalize: --no-normalize: compute U1 (U2^T V) without the normaliser
        column and D^-1: the outputs are N instead of A
    attention: --attention KIND: approx (the default): approximate
        attention, n, d, g; exact: exact attention (MODEL.md section 5), n
        and d, no -g; flash by default. Naming a strategy of exact attention
        (flash, exact-matmul) implies it (one of: approx, exact)
    dag: --dag FILE: search a small DAG from a file instead (GraphML, GML or
        an edge list; docs/DAG_FILES.md)
    dag_format: --dag-format F: graphml, gml, edgelist, hdag (HyperdagDB) or
        mtx (a lower-triangular Matrix Market matrix): the format of --dag
        FILE; without it the content tells (standard input too) (one of:
        graphml, gml, edgelist, hdag, mtx)
    ignore_weights: --ignore-weights: read a HyperdagDB file's comm and mem
        weights as 1 (the game is unit-weight; without it other weights are
        refused); the report says so
    time_limit: --time-limit S: stop the search after S seconds (default 60;
        10 an instance with --sweep) and report the bracket
    memory_limit: --memory-limit B: the search's tables in bytes, 1G by
        default (and at most 90% of this machine's memory limit); beyond it
        the search stops and reports the bracket
    trace: --trace FILE: write the best sequence found as a trace (- for
        standard output); `pebblesim validate FILE` replays it
    sweep: --sweep: search every instance of the built-in grid (approximate
        and exact attention, docs/OPTIMAL.md) and print the table as CSV, or
        JSON with --json
    """
    return call('optimal', OPTIONS['optimal'], locals())


def list_strategies(
    *,
    plugin: str | os.PathLike | None = None,
) -> list:
    """`pebblesim list ... --json`: the strategies and the paper's sections
    they implement.

    Returns the document `pebblesim list ... --json` prints, parsed
    (docs/pebblesim.schema.json). False and None leave an option out;
    a value of the wrong type raises TypeError, a NUL byte ValueError,
    each naming the option; the command's own refusal raises
    PebblesimError.

    Options:
    plugin: --plugin FILE.so: load strategies from a plugin
        (docs/EXTENDING.md); its code runs in pebblesim, its moves are
        validated
    """
    return call('list', OPTIONS['list'], locals())


def validate(
    path_or_lines: str | os.PathLike | bytes | Trace | Sequence[str | dict],
    *,
    M: int | str | None = None,
    n: int | str | None = None,
    d: int | None = None,
    g: int | None = None,
    no_normalize: bool = False,
    causal: bool = False,
    decode: int | str | None = None,
    dag: str | os.PathLike | None = None,
    dag_format: str | None = None,
    ignore_weights: bool = False,
    element_path: bool = False,
    max_moves: int | str | None = None,
    values: bool = False,
    q: str | os.PathLike | None = None,
    k: str | os.PathLike | None = None,
    v: str | os.PathLike | None = None,
    seed: int | None = None,
    entry_bound: float | None = None,
    polynomial: str | None = None,
    interval: float | None = None,
    output: str | os.PathLike | None = None,
    progress: bool = False,
) -> dict:
    """`pebblesim validate ... --json`: replay a trace (any program's) in
    the engine: its counts, or the first broken rule.

    path_or_lines: the trace: a file name (str or os.PathLike), a Trace, its
    text (bytes), or its lines, each a str or a dict (one operation).
    Only a file name is read from disk.

    Returns the document `pebblesim validate ... --json` prints, parsed
    (docs/pebblesim.schema.json). False and None leave an option out;
    a value of the wrong type raises TypeError, a NUL byte ValueError,
    each naming the option; the command's own refusal raises
    PebblesimError.

    Options:
    M: -M M: validate under this fast memory instead of the header's
    n: -n N: with -d and -g: insist that the header names this DAG
    d: -d D: features (columns of Q, K, V), D >= 1
    g: -g G: degree of the polynomial replacing exp, 0 <= G <= 64; U1 and U2
        have r = C(D+G, G) columns
    no_normalize: --no-normalize: compute U1 (U2^T V) without the normaliser
        column and D^-1: the outputs are N instead of A
    causal: --causal: causal attention (MODEL.md section 7): row i sees keys
        j <= i only, as in a decoder model's prefill
    decode: --decode P: token-by-token decoding (MODEL.md section 8, with
        --causal): rows P..n-1 generated one at a time after a prompt of P
        rows, 1 <= P < n; a run's I/O is also given per token
    dag: --dag FILE: the trace pebbles this DAG file (GraphML, GML or an
        edge list), its moves naming vertex ids
    dag_format: --dag-format F: graphml, gml, edgelist, hdag (HyperdagDB) or
        mtx (a lower-triangular Matrix Market matrix): the format of --dag
        FILE; without it the content tells (standard input too) (one of:
        graphml, gml, edgelist, hdag, mtx)
    ignore_weights: --ignore-weights: read a HyperdagDB file's comm and mem
        weights as 1 (the game is unit-weight; without it other weights are
        refused); the report says so
    element_path: --element-path: validate move by move, without the block
        path (the same verdicts, slower: for cross-checks)
    max_moves: --max-moves N: refuse a trace once it makes more than N
        elementary moves (default 64 a node of the declared DAG, at least
        16M = 16777216); 0 for no limit
    values: --values: replay with numbers (docs/VALUES.md): the outputs,
        their distance to a direct evaluation, and epsilon
    q: --q Q.npy: read Q (n x d, float64 or float32) from a .npy file; --q,
        --k and --v go together; run takes -n and -d from their shape when
        they are not given
    k: --k K.npy: read K (n x d, float64 or float32) from a .npy file; --q,
        --k and --v go together; run takes -n and -d from their shape when
        they are not given
    v: --v V.npy: read V (n x d, float64 or float32) from a .npy file; --q,
        --k and --v go together; run takes -n and -d from their shape when
        they are not given
    seed: --seed S: random inputs from seed S (default 1)
    entry_bound: --entry-bound B: random inputs uniform in [-B, B] (default
        1)
    polynomial: --polynomial P: taylor (the default), chebyshev or minimax:
        the polynomial P of degree g replacing exp (one of: taylor,
        chebyshev, minimax)
    interval: --interval BETA: P approximates exp on [-BETA, BETA] (default
        B^2 sqrt d, B the entry bound or the largest |entry| of Q and K)
    output: --output A.npy: write the outputs (A, or N or O without
        normalisation) as an n x d float64 .npy file (--decode P: the n - P
        generated rows)
    progress: --progress: progress on standard error even when it is not a
        terminal (a batch job's log): a line every 10 s of a long replay
    """
    return call('validate', OPTIONS['validate'], locals(), path_or_lines)
