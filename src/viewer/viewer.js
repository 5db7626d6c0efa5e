/*
 * The viewer of `pebblesim view` (docs/VIEWER.md). It replays the trace
 * embedded in the page set operation by set operation, with its own
 * model of the pebbles (MODEL.md section 2): a byte of state a node (red,
 * blue, incomplete), and for each sum the number of in-edges it holds.
 * The engine has judged the trace already; the page does not check
 * rules, it shows them played. All text from the trace reaches the
 * document through textContent, never as markup.
 */
(function () {
	'use strict';

	var RED = 1, BLUE = 2, INCOMPLETE = 4;
	/* display categories of a node, and their colours */
	var CAT_NONE = 0, CAT_RED = 1, CAT_BLUE = 2, CAT_BOTH = 3, CAT_PARTIAL = 4, CAT_ABSENT = 5;
	var CATS = 6;
	var COLOURS = [[238, 238, 238], [214, 39, 40], [31, 119, 180], [148, 103, 189], [255, 160, 20],
		[255, 255, 255]];
	var CAT_NAMES = ['neither', 'red (fast memory only)', 'blue (slow memory only)',
		'red and blue', 'a partial sum (some in-edges aggregated), red or blue',
		'no node (causal S and E: j > i; decoding: rows before the first generated one)'];
	/* most cells along the long axes (rows, monomials) and the short (columns) */
	var LONG_CELLS = 160, SHORT_CELLS = 64;
	/* checkpoints the page keeps, at most: their bytes, and their number
	 * (each is a copy of the whole state, made during the first pass) */
	var CHECKPOINT_BYTES = 96 * 1024 * 1024, CHECKPOINTS = 32;

	var data = JSON.parse(document.getElementById('pebblesim-data').textContent);
	var ops = data.ops;
	var steps = ops.length;
	var arrays = [];
	var byName = {};
	var errors = [];

	window.addEventListener('error', function (e) { errors.push(String(e.message)); });

	function el(id) { return document.getElementById(id); }
	function fmt(x) { return Math.round(x).toLocaleString('en-US'); }

	/* ---- the arrays and their cells ---- */

	function blockOf(extent, letter) {
		var long = letter === 'i' || letter === 'j' || letter === 'm';
		return long ? Math.max(1, Math.ceil(longest / LONG_CELLS))
			: Math.max(1, Math.ceil(widest / SHORT_CELLS));
	}

	var longest = 1, widest = 1;
	data.arrays.forEach(function (a) {
		[a.rows, a.cols].forEach(function (ext, c) {
			var l = a.coords[c];
			if (l === 'i' || l === 'j' || l === 'm')
				longest = Math.max(longest, ext);
			else
				widest = Math.max(widest, ext);
		});
	});

	data.arrays.forEach(function (a, index) {
		var arr = {
			index: index, name: a.name, coords: a.coords, rows: a.rows, cols: a.cols,
			role: a.role, output: a.output, inDegree: a.in_degree || 0, mac: a.mac || null,
			/* causal: a sum's in-degree by row; the causal state's
			 * columns are (m, b) pairs, depth of them a value of m */
			inDegrees: a.in_degrees || null, depth: a.depth || 0,
			/* decoding: the first row that is a node's, and the
			 * prompt's rows and their role; causal exact: j <= i */
			firstRow: a.first_row || 0, prompt: a.prompt || null, triangle: a.lower_triangle === true,
			nodes: a.rows * a.cols,
			br: blockOf(a.rows, a.coords[0]), bc: blockOf(a.cols, a.coords[1])
		};
		arr.cellRows = Math.ceil(a.rows / arr.br);
		arr.cellCols = Math.ceil(a.cols / arr.bc);
		/* a node's display cell: rowCell[row] + colCell[column] */
		arr.rowCell = new Int32Array(a.rows);
		for (var r = 0; r < a.rows; r++)
			arr.rowCell[r] = Math.floor(r / arr.br) * arr.cellCols;
		arr.colCell = new Int32Array(a.cols);
		for (var c = 0; c < a.cols; c++)
			arr.colCell[c] = Math.floor(c / arr.bc);
		arr.state = new Uint8Array(arr.nodes);
		arr.agg = arr.role === 'sum' ? new Uint32Array(arr.nodes) : null;
		arr.counts = new Uint32Array(arr.cellRows * arr.cellCols * CATS);
		arr.dirty = new Uint8Array(arr.cellRows * arr.cellCols);
		arr.anyDirty = true;
		arr.changes = false; /* named by some operation */
		arrays.push(arr);
		byName[a.name] = arr;
	});

	/* the state the replay carries besides the arrays */
	var cur = { step: 0, red: 0, peak: 0, loads: new Float64Array(arrays.length),
		saves: new Float64Array(arrays.length) };

	function category(code) {
		return (code & INCOMPLETE) ? CAT_PARTIAL : (code & (RED | BLUE));
	}

	/* node idx of arr, in display cell cell, takes code (red and blue
	 * bits); a sum's incomplete bit follows from its in-edges */
	function setCode(arr, idx, cell, code) {
		if (arr.agg !== null && (code & (RED | BLUE)) !== 0) {
			var held = arr.agg[idx];
			var degree = arr.inDegrees !== null ? arr.inDegrees[Math.floor(idx / arr.cols)] : arr.inDegree;
			if (held > 0 && held < degree)
				code |= INCOMPLETE;
		}
		var old = arr.state[idx];
		if (old === code)
			return;
		arr.state[idx] = code;
		if (((old ^ code) & RED) !== 0)
			cur.red += (code & RED) !== 0 ? 1 : -1;
		var oc = category(old), nc = category(code);
		if (oc !== nc) {
			arr.counts[cell * CATS + oc]--;
			arr.counts[cell * CATS + nc]++;
			arr.dirty[cell] = 1;
			arr.anyDirty = true;
		}
	}

	/* is node (row r, column c) of arr a node of the DAG? */
	function exists(arr, r, c) {
		return r >= arr.firstRow && (!arr.triangle || c <= r);
	}

	/* the role of arr's nodes in row r: the prompt's below it */
	function roleAt(arr, r) {
		return arr.prompt !== null && r < arr.prompt.rows ? arr.prompt.role : arr.role;
	}

	function resetState() {
		arrays.forEach(function (arr) {
			arr.state.fill(0);
			if (arr.agg)
				arr.agg.fill(0);
			arr.counts.fill(0);
			if (arr.firstRow > 0 || arr.triangle) {
				for (var i = 0; i < arr.rows; i++)
					for (var j = 0; j < arr.cols; j++)
						arr.counts[(arr.rowCell[i] + arr.colCell[j]) * CATS +
							(exists(arr, i, j) ? CAT_NONE : CAT_ABSENT)]++;
			} else {
				for (var r = 0; r < arr.cellRows; r++)
					for (var c = 0; c < arr.cellCols; c++) {
						var n = (Math.min(arr.rows, (r + 1) * arr.br) - r * arr.br) *
							(Math.min(arr.cols, (c + 1) * arr.bc) - c * arr.bc);
						arr.counts[(r * arr.cellCols + c) * CATS + CAT_NONE] = n;
					}
			}
			arr.dirty.fill(1);
			arr.anyDirty = true;
		});
		cur.step = 0;
		cur.red = 0;
		cur.peak = 0;
		cur.loads.fill(0);
		cur.saves.fill(0);
		/* MODEL.md section 2: every input starts blue; decoding's
		 * (section 8): the prompt's cache, state and last output */
		arrays.forEach(function (arr) {
			for (var r = arr.firstRow; r < arr.rows; r++)
				if (roleAt(arr, r) === 'input')
					for (var c = 0; c < arr.cols; c++)
						if (exists(arr, r, c))
							setCode(arr, r * arr.cols + c, arr.rowCell[r] + arr.colCell[c], BLUE);
		});
	}

	/* ---- operations ---- */

	/* a coordinate of the trace: an integer, a list, or {lo, hi} */
	function coordSet(v) {
		if (typeof v === 'number')
			return [v];
		if (Array.isArray(v))
			return v;
		var out = new Array(Math.max(0, v.hi - v.lo));
		for (var k = 0; k < out.length; k++)
			out[k] = v.lo + k;
		return out;
	}

	function setSize(v) {
		return typeof v === 'number' ? 1 : Array.isArray(v) ? v.length : Math.max(0, v.hi - v.lo);
	}

	/* the moves a set operation makes on each node it names */
	var DO_LOAD = 0, DO_SAVE = 1, DO_COMPUTE = 2, DO_DELETE = 3, DO_MAC = 4;

	/* the columns of a set: of a three-coordinate array (the causal
	 * state), its (m, b) pairs */
	function columnSet(arr, s1, s2) {
		var cols = coordSet(s1);
		if (!arr.depth)
			return cols;
		var bs = coordSet(s2), out = [];
		for (var a = 0; a < cols.length; a++)
			for (var b = 0; b < bs.length; b++)
				out.push(cols[a] * arr.depth + bs[b]);
		return out;
	}

	/* plays one kind of move on each node of a set; a mac adds per
	 * in-edges to each sum */
	function play(arr, s0, s1, s2, what, per) {
		var rows = coordSet(s0), cols = columnSet(arr, s1, s2), state = arr.state, agg = arr.agg;
		for (var a = 0; a < rows.length; a++) {
			var r = rows[a], base = r * arr.cols, rc = arr.rowCell[r];
			for (var b = 0; b < cols.length; b++) {
				var c = cols[b], k = base + c, cell = rc + arr.colCell[c];
				switch (what) {
				case DO_LOAD:
				case DO_COMPUTE:
					setCode(arr, k, cell, state[k] | RED);
					break;
				case DO_SAVE:
					setCode(arr, k, cell, state[k] | BLUE);
					break;
				case DO_DELETE:
					/* a sum deleted without a copy in slow memory
					 * starts again from nothing */
					if (agg !== null && (state[k] & BLUE) === 0)
						agg[k] = 0;
					setCode(arr, k, cell, state[k] & BLUE);
					break;
				default:
					/* the edges join the sum's set; its blue copy
					 * is stale */
					agg[k] += per;
					setCode(arr, k, cell, RED);
				}
			}
		}
	}

	/* op k: its array, and the sets of its coordinates */
	/* (an operation of no moves may name a product, which has no array) */
	function opArray(op) { return byName[op.op === 'mac' ? op.into : op.kind] || null; }

	function opMoves(op) {
		var arr = opArray(op);
		if (arr === null)
			return 0;
		var letters = op.op === 'mac' ? arr.mac.coords : arr.coords;
		var sizes = letters.map(function (l) { return setSize(op[l]); });
		/* a fused mac computes and deletes its plain parent for each pair
		 * of its first two coordinates, even with no column */
		if (op.op === 'mac' && op.fuse === true)
			return sizes[0] * sizes[1] * (sizes[2] + 2);
		return sizes.reduce(function (a, b) { return a * b; }, 1);
	}

	/* plays op on the state; returns the most red pebbles during it
	 * (a mac's product counted, and a fused mac's plain parent) */
	function apply(op) {
		var arr = opArray(op);
		var before = cur.red, moves = opMoves(op);
		if (moves === 0)
			return before;
		switch (op.op) {
		case 'load':
			cur.loads[arr.index] += moves;
			play(arr, op[arr.coords[0]], op[arr.coords[1]], op[arr.coords[2]], DO_LOAD, 0);
			return cur.red;
		case 'save':
			cur.saves[arr.index] += moves;
			play(arr, op[arr.coords[0]], op[arr.coords[1]], op[arr.coords[2]], DO_SAVE, 0);
			return before;
		case 'compute':
			play(arr, op[arr.coords[0]], op[arr.coords[1]], op[arr.coords[2]], DO_COMPUTE, 0);
			return cur.red;
		case 'delete':
			play(arr, op[arr.coords[0]], op[arr.coords[1]], op[arr.coords[2]], DO_DELETE, 0);
			return before;
		}
		/* a mac */
		var m = arr.mac, p = m.coords;
		var macs = setSize(op[p[0]]) * setSize(op[p[1]]) * setSize(op[p[2]]);
		if (m.target.length === 3) {
			/* the causal state: one in-edge (P2, or HC carrying) to each */
			if (macs > 0)
				play(arr, op[p[m.target[0]]], op[p[m.target[1]]], op[p[m.target[2]]], DO_MAC, 1);
		} else {
			var per = setSize(op[p[m.counted]]);
			if (per > 0)
				play(arr, op[p[m.target[0]]], op[p[m.target[1]]], undefined, DO_MAC, per);
		}
		if (op.fuse === true) {
			/* for each pair of the first two coordinates, the plain
			 * parent is computed, the macs over the last run with it
			 * red, and it is deleted */
			var outer = setSize(op[p[0]]) * setSize(op[p[1]]);
			return outer === 0 ? before : setSize(op[p[2]]) === 0 ? before + 1 : cur.red + 2;
		}
		return macs > 0 ? cur.red + 1 : before;
	}

	/* ---- the first pass: the whole trace, the chart's series, checkpoints ---- */

	/* a checkpoint copies only the arrays some operation changes (not U1
	 * and U2 under fused macs, for one) */
	ops.forEach(function (op) {
		var arr = opArray(op);
		if (arr !== null)
			arr.changes = true;
	});
	var stateBytes = 0;
	arrays.forEach(function (arr) {
		if (arr.changes)
			stateBytes += arr.nodes * (arr.agg ? 5 : 1) + arr.counts.length * 4;
	});
	var keep = Math.max(2, Math.min(CHECKPOINTS, Math.floor(CHECKPOINT_BYTES / Math.max(1, stateBytes))));
	/* a checkpoint at most every 64 operations: seeking replays fewer */
	var interval = Math.max(64, Math.ceil(steps / (keep - 1)));
	var checkpoints = [];
	var redAfter = new Float64Array(steps + 1);
	var peakDuring = new Float64Array(steps + 1);
	var peakSoFar = new Float64Array(steps + 1);

	function checkpoint() {
		return {
			step: cur.step, red: cur.red, peak: cur.peak,
			loads: cur.loads.slice(), saves: cur.saves.slice(),
			arrays: arrays.map(function (arr) {
				return !arr.changes ? null : { state: arr.state.slice(),
					agg: arr.agg ? arr.agg.slice() : null, counts: arr.counts.slice() };
			})
		};
	}

	function restore(cp) {
		cur.step = cp.step;
		cur.red = cp.red;
		cur.peak = cp.peak;
		cur.loads.set(cp.loads);
		cur.saves.set(cp.saves);
		arrays.forEach(function (arr, k) {
			if (cp.arrays[k] === null)
				return;
			arr.state.set(cp.arrays[k].state);
			if (arr.agg)
				arr.agg.set(cp.arrays[k].agg);
			arr.counts.set(cp.arrays[k].counts);
			arr.dirty.fill(1);
			arr.anyDirty = true;
		});
	}

	function stepOnce() {
		var during = apply(ops[cur.step]);
		cur.step++;
		if (during > cur.peak)
			cur.peak = during;
		return during;
	}

	var started = performance.now();
	resetState();
	redAfter[0] = cur.red;
	for (var s = 0; s < steps; s++) {
		if (s % interval === 0)
			checkpoints.push(checkpoint());
		peakDuring[s + 1] = stepOnce();
		redAfter[s + 1] = cur.red;
		peakSoFar[s + 1] = cur.peak;
	}
	var firstPassMs = performance.now() - started;
	var final = { loads: cur.loads.slice(), saves: cur.saves.slice(), peak: cur.peak };
	restore(checkpoints.length ? checkpoints[0] : checkpoint());
	if (!checkpoints.length)
		checkpoints.push(checkpoint());

	/* to step k: forward from here, or from the last checkpoint before k */
	function seek(k) {
		k = Math.max(0, Math.min(steps, k | 0));
		var cp = checkpoints[Math.min(checkpoints.length - 1, Math.floor(k / interval))];
		if (k < cur.step || (cp.step > cur.step && k - cp.step < k - cur.step))
			restore(cp);
		while (cur.step < k)
			stepOnce();
	}

	/* ---- drawing ---- */

	var grids = el('grids');
	arrays.forEach(function (arr) {
		var box = document.createElement('div');
		box.className = 'grid';
		var name = document.createElement('span');
		name.className = 'name';
		name.textContent = arr.name + (arr.output ? ' (output)' : '') +
			(arr.role === 'sum' ? (arr.inDegrees !== null
				? ' (sum of ' + fmt(arr.inDegrees[0]) + ' to ' + fmt(Math.max.apply(null, arr.inDegrees)) + ', by row)'
				: ' (sum of ' + fmt(arr.inDegree) + ')') : '') +
			(arr.prompt !== null && arr.prompt.role === 'input' ? ' (the prompt\u2019s rows: inputs)' : '');
		var shape = document.createElement('span');
		shape.className = 'shape';
		shape.textContent = fmt(arr.rows) + ' \u00d7 ' + fmt(arr.cols) + ' (' +
			arr.coords[0] + ' \u00d7 ' + (arr.depth ? '(' + arr.coords[1] + ', ' + arr.coords[2] + ')' : arr.coords[1]) + ')' +
			(arr.br > 1 || arr.bc > 1 ? '; a cell: ' + arr.br + ' \u00d7 ' + arr.bc : '');
		var canvas = document.createElement('canvas');
		canvas.width = arr.cellCols;
		canvas.height = arr.cellRows;
		canvas.setAttribute('data-array', arr.name);
		arr.box = box;
		arr.canvas = canvas;
		box.appendChild(name);
		box.appendChild(shape);
		box.appendChild(canvas);
		grids.appendChild(box);
		arr.ctx = canvas.getContext('2d');
		arr.image = arr.ctx.createImageData(arr.cellCols, arr.cellRows);
	});

	/*
	 * The grids' scale, from the window: a cell of the long axes (i, j, m)
	 * LONG px, of the short (a, b) SHORT px, so that arrays that share an
	 * axis line up. The short axes are widened until the widest array's
	 * columns span 120 px (16 columns are not 16 px wide), and LONG is the
	 * largest that lays every grid out, in rows as the page wraps them,
	 * within the window's height below the chart (within the window's
	 * height where that leaves too little): the tallest grid at least
	 * 160 px, at most 10 px a cell.
	 */
	function isLong(letter) { return letter === 'i' || letter === 'j' || letter === 'm'; }
	var shortCells = 1, longCells = 1;
	arrays.forEach(function (arr) {
		[arr.cellRows, arr.cellCols].forEach(function (cells, c) {
			if (isLong(arr.coords[c]))
				longCells = Math.max(longCells, cells);
			else
				shortCells = Math.max(shortCells, cells);
		});
	});
	function gridSize(arr, long, short) {
		return [arr.cellCols * (isLong(arr.coords[1]) ? long : short),
			arr.cellRows * (isLong(arr.coords[0]) ? long : short)];
	}
	function layoutGrids() {
		/* the window's height below the grids' top, or, when the page
		 * above leaves less than 320 px, the window's */
		var width = Math.max(200, grids.clientWidth), gap = 14;
		var below = window.innerHeight - (grids.getBoundingClientRect().top + window.scrollY) - 16;
		var height = below >= 320 ? below : Math.max(320, window.innerHeight - 24);
		arrays.forEach(function (arr) {
			arr.canvas.style.width = arr.canvas.style.height = '1px';
		});
		var labels = arrays.map(function (arr) {
			return [arr.box.getBoundingClientRect().width, arr.box.getBoundingClientRect().height];
		});
		/* the height the grids take at a scale, wrapped as flex-wrap does */
		function laidOut(long, short) {
			var total = 0, row = 0, rowHeight = 0;
			arrays.forEach(function (arr, k) {
				var size = gridSize(arr, long, short);
				var w = Math.max(size[0] + 2, labels[k][0]), h = size[1] + 2 + labels[k][1];
				if (row > 0 && row + gap + w > width) {
					total += rowHeight + gap;
					row = 0;
					rowHeight = 0;
				}
				row += (row > 0 ? gap : 0) + w;
				rowHeight = Math.max(rowHeight, h);
			});
			return total + rowHeight;
		}
		var least = 160 / longCells, long = Math.max(least, 10), short;
		for (;;) {
			short = Math.max(long, 120 / shortCells);
			if (long <= least || laidOut(long, short) <= height)
				break;
			long = Math.max(least, long * 0.94);
		}
		arrays.forEach(function (arr) {
			var size = gridSize(arr, long, short);
			arr.canvas.style.width = size[0].toFixed(1) + 'px';
			arr.canvas.style.height = size[1].toFixed(1) + 'px';
		});
	}
	layoutGrids();
	window.addEventListener('resize', layoutGrids);

	/*
	 * A cell's colour: the mean of its nodes', except that red pebbles
	 * (red, or red and blue) weigh at least a third of it when the cell
	 * holds any: one red node among 26 of a cell would leave it grey.
	 */
	function cellWeights(counts, at) {
		var w = [], total = 0;
		for (var c = 0; c < CATS; c++) {
			w.push(counts[at + c]);
			total += w[c];
		}
		var red = w[CAT_RED] + w[CAT_BOTH];
		if (red > 0 && 3 * red < total) {
			var f = (total - red) / (2 * red);
			w[CAT_RED] *= f;
			w[CAT_BOTH] *= f;
		}
		return w;
	}

	function drawArray(arr) {
		if (!arr.anyDirty)
			return;
		var px = arr.image.data, cells = arr.cellRows * arr.cellCols;
		for (var cell = 0; cell < cells; cell++) {
			if (!arr.dirty[cell])
				continue;
			arr.dirty[cell] = 0;
			var total = 0, rgb = [0, 0, 0], w = cellWeights(arr.counts, cell * CATS);
			for (var c = 0; c < CATS; c++) {
				var n = w[c];
				total += n;
				rgb[0] += n * COLOURS[c][0];
				rgb[1] += n * COLOURS[c][1];
				rgb[2] += n * COLOURS[c][2];
			}
			px[cell * 4] = rgb[0] / total;
			px[cell * 4 + 1] = rgb[1] / total;
			px[cell * 4 + 2] = rgb[2] / total;
			px[cell * 4 + 3] = 255;
		}
		arr.ctx.putImageData(arr.image, 0, 0);
		arr.anyDirty = false;
	}

	/* the chart: red pebbles after each operation (the most during it
	 * lighter), M dashed, the current step a vertical line */
	var chart = el('chart'), cctx = chart.getContext('2d');
	function drawChart() {
		var w = chart.width, h = chart.height, left = 64, right = 10, top = 10, bottom = 22;
		var top_value = Math.max(data.M, final.peak) * 1.08;
		var x = function (k) { return left + (steps ? k / steps : 0) * (w - left - right); };
		var y = function (v) { return h - bottom - v / top_value * (h - top - bottom); };
		cctx.clearRect(0, 0, w, h);
		cctx.fillStyle = '#fff';
		cctx.fillRect(0, 0, w, h);
		cctx.font = '11px sans-serif';
		cctx.fillStyle = '#444';
		cctx.strokeStyle = '#999';
		cctx.beginPath();
		cctx.moveTo(left, top);
		cctx.lineTo(left, h - bottom);
		cctx.lineTo(w - right, h - bottom);
		cctx.stroke();
		cctx.fillText('0', left - 12, h - bottom + 4);
		cctx.fillText(fmt(steps) + ' operations', w - right - 90, h - 6);
		/* one column of pixels: the least and most of its steps */
		var series = [[peakDuring, '#f2b8b8'], [redAfter, '#b22222']];
		series.forEach(function (sv) {
			cctx.strokeStyle = sv[1];
			cctx.beginPath();
			var width = w - left - right;
			for (var px = 0; px <= width; px++) {
				var k0 = Math.floor(px / width * steps), k1 = Math.max(k0 + 1, Math.floor((px + 1) / width * steps));
				var lo = Infinity, hi = -Infinity;
				for (var k = k0; k <= Math.min(k1, steps); k++) {
					lo = Math.min(lo, sv[0][k]);
					hi = Math.max(hi, sv[0][k]);
				}
				if (px === 0)
					cctx.moveTo(left + px, y(lo));
				cctx.lineTo(left + px, y(lo));
				cctx.lineTo(left + px, y(hi));
			}
			cctx.stroke();
		});
		cctx.strokeStyle = '#000';
		cctx.setLineDash([6, 4]);
		cctx.beginPath();
		cctx.moveTo(left, y(data.M));
		cctx.lineTo(w - right, y(data.M));
		cctx.stroke();
		cctx.setLineDash([]);
		cctx.fillStyle = '#000';
		cctx.fillText('M = ' + fmt(data.M), 4, y(data.M) + 4);
		cctx.strokeStyle = '#1f77b4';
		cctx.beginPath();
		cctx.moveTo(x(cur.step), top);
		cctx.lineTo(x(cur.step), h - bottom);
		cctx.stroke();
	}

	/* ---- the text around ---- */

	/*
	 * A coordinate's set in one notation: runs of consecutive values as
	 * "lo..hi" (both included), a single value alone, runs apart by
	 * commas; past eight runs, the first six and how many more. A range {lo, hi} is
	 * the run lo..hi-1; a list, its runs.
	 */
	function runText(lo, hi) { return lo === hi ? String(lo) : lo + '..' + hi; }
	function coordText(v) {
		if (typeof v === 'number')
			return String(v);
		if (!Array.isArray(v))
			return v.hi <= v.lo ? '(none)' : runText(v.lo, v.hi - 1) +
				(v.hi - v.lo > 1 ? ' (' + fmt(v.hi - v.lo) + ')' : '');
		var runs = [], k = 0;
		while (k < v.length) {
			var start = k;
			while (k + 1 < v.length && v[k + 1] === v[k] + 1)
				k++;
			runs.push(runText(v[start], v[k]));
			k++;
		}
		if (!runs.length)
			return '(none)';
		var text = runs.length <= 8 ? runs.join(',')
			: runs.slice(0, 6).join(',') + ', \u2026 ' + fmt(runs.length - 6) + ' runs more';
		return v.length > 1 ? text + ' (' + fmt(v.length) + ')' : text;
	}

	function opText(k) {
		if (k === 0)
			return 'the start: every input in slow memory (blue), nothing else pebbled';
		var op = ops[k - 1], arr = opArray(op);
		if (arr === null)
			return 'line ' + fmt(k + 1) + ': ' + op.op + ' ' + op.kind + ', an empty set  \u2014 0 moves';
		var letters = op.op === 'mac' ? arr.mac.coords : arr.coords;
		var text = op.op === 'mac' ? 'mac ' + arr.mac.product + ' into ' + arr.name : op.op + ' ' + arr.name;
		letters.forEach(function (l) { text += '  ' + l + '=' + coordText(op[l]); });
		if (op.fuse)
			text += '  fused (' + arr.mac.fused + ' computed and deleted around each use)';
		return 'line ' + fmt(k + 1) + ': ' + text + '  \u2014 ' + fmt(opMoves(op)) + ' moves';
	}

	var ioCells = arrays.map(function (arr) {
		var tr = document.createElement('tr');
		var th = document.createElement('th');
		th.textContent = arr.name;
		tr.appendChild(th);
		var cells = ['loads', 'saves', 'io'].map(function (field) {
			var td = document.createElement('td');
			td.setAttribute('data-array', arr.name);
			td.setAttribute('data-field', field);
			tr.appendChild(td);
			return td;
		});
		el('io-body').appendChild(tr);
		return cells;
	});

	function updateText() {
		var loads = 0, saves = 0;
		arrays.forEach(function (arr, k) {
			ioCells[k][0].textContent = fmt(cur.loads[k]);
			ioCells[k][1].textContent = fmt(cur.saves[k]);
			ioCells[k][2].textContent = fmt(cur.loads[k] + cur.saves[k]);
			loads += cur.loads[k];
			saves += cur.saves[k];
		});
		el('total-loads').textContent = fmt(loads);
		el('total-saves').textContent = fmt(saves);
		el('total-io').textContent = fmt(loads + saves);
		el('red-now').textContent = fmt(cur.red) + ' of M = ' + fmt(data.M);
		el('peak-now').textContent = fmt(cur.peak);
		el('step-label').textContent = 'step ' + fmt(cur.step) + ' of ' + fmt(steps);
		el('op').textContent = opText(cur.step);
		el('slider').value = String(cur.step);
		el('broken').hidden = data.verdict.valid || cur.step < steps;
	}

	function render() {
		arrays.forEach(drawArray);
		drawChart();
		updateText();
	}

	/* ---- the header ---- */

	function addParam(name, value) {
		var tr = document.createElement('tr');
		var th = document.createElement('th');
		var td = document.createElement('td');
		th.textContent = name;
		td.textContent = value;
		tr.appendChild(th);
		tr.appendChild(td);
		el('params').appendChild(tr);
	}

	var dag = data.dag, v = data.verdict;
	var exact = dag.kind === 'exact-attention';
	document.title = 'pebblesim view: ' + (data.strategy || 'trace') + ', ' +
		(exact ? 'exact' : 'approximate') + ' attention n = ' + dag.n +
		(dag.decode ? ', decoding after P = ' + dag.decode : dag.causal ? ', causal' : '');
	el('title-strategy').textContent = data.strategy ? '\u2014 ' + data.strategy : '';
	addParam('trace', data.source + ' (' + fmt(steps) + ' set operations shown)');
	addParam('DAG', exact
		? 'exact attention  n = ' + fmt(dag.n) + ', d = ' + dag.d + (dag.normalize ? ', normalised (|B| = d+1)' : ', not normalised')
		: 'approximate attention  n = ' + fmt(dag.n) + ', d = ' + dag.d + ', g = ' + dag.g +
		  ', r = C(d+g,g) = ' + fmt(dag.r) + (dag.normalize ? ', normalised (|B| = d+1)' : ', not normalised'));
	if (dag.decode)
		addParam('decoding', 'causal, token by token (MODEL.md section 8): prompt P = ' + fmt(dag.decode) +
			' rows, rows ' + fmt(dag.decode) + '..' + fmt(dag.n - 1) + ' generated one at a time (' +
			fmt(dag.n - dag.decode) + ' tokens); ' + (exact ? 'the key-value cache K, V of the prompt'
				: 'the state H[P-1]') + ' and A[P-1] start blue');
	else if (dag.causal)
		addParam('causal', 'row i sees keys j <= i only (MODEL.md section 7)' + (exact
			? ': S and E exist for j <= i, O[i] sums i + 1'
			: ': the state H[j,m,b] after key row j, drawn as rows j \u00d7 (m, b)'));
	addParam('fast memory', 'M = ' + fmt(data.M) + (data.M !== data.header_M ? ' (the header says ' + fmt(data.header_M) + ')' : ''));
	addParam('strategy', (data.strategy || '(not named)') + (data.section ? ' (' + data.section + ')' : ''));
	if (data.plan)
		addParam('plan', data.plan);
	var verdict = el('verdict');
	var mark = document.createElement('span');
	mark.className = v.valid ? 'valid' : 'invalid';
	mark.textContent = v.valid ? 'valid' : 'invalid';
	verdict.appendChild(document.createTextNode('engine: '));
	verdict.appendChild(mark);
	verdict.appendChild(document.createTextNode(v.valid
		? ', ' + fmt(v.moves) + ' elementary moves checked; loads ' + fmt(v.loads) + ', saves ' +
		  fmt(v.saves) + ', I/O ' + fmt(v.io) +
		  (dag.decode ? ' (' + (v.io / (dag.n - dag.decode)).toFixed(2) + ' per token)' : '') +
		  ', peak red ' + fmt(v.peak_red)
		: ': the page stops before line ' + fmt(v.line) + ', which breaks a rule (' + v.rule + ')'));
	if (!v.valid)
		el('broken').textContent = v.violation;

	var legend = el('legend');
	CAT_NAMES.forEach(function (name, c) {
		var row = document.createElement('div');
		var sw = document.createElement('span');
		sw.className = 'swatch';
		sw.style.background = 'rgb(' + COLOURS[c].join(',') + ')';
		row.appendChild(sw);
		row.appendChild(document.createTextNode(name));
		legend.appendChild(row);
	});
	var coarse = arrays.some(function (arr) { return arr.br > 1 || arr.bc > 1; });
	el('scale').textContent = (coarse
		? 'Large arrays are drawn coarser than a cell a node: a cell of r \u00d7 c nodes (written under each array) has the mean colour of its nodes, red pebbles weighing at least a third of a cell that holds any. '
		: 'One cell a node. ') +
		'Axes i, j and m share one scale, the columns a and b another, so arrays that share an axis line up. ' +
		'Set operations are played whole; the chart shows the red pebbles after each, ' +
		'and lighter the most during it (a mac\u2019s product, a fused mac\u2019s regenerated parent counted). ' +
		'Seeking starts from the nearest of ' + checkpoints.length + ' checkpoints, one every ' +
		fmt(interval) + ' operations.';

	/* ---- controls ---- */

	var slider = el('slider');
	slider.max = String(steps);
	var playing = false, last = 0, owed = 0;

	function go(k) {
		seek(k);
		render();
	}

	function setPlaying(on) {
		playing = on && cur.step < steps;
		el('play').textContent = playing ? 'pause' : 'play';
		if (playing) {
			last = performance.now();
			owed = 0;
			requestAnimationFrame(frame);
		}
	}

	function frame(now) {
		if (!playing)
			return;
		var rate = Number(el('speed').value);
		if (rate === 0) {
			/* as fast as drawn: about 12 ms of operations a frame */
			var until = performance.now() + 12;
			while (cur.step < steps && performance.now() < until)
				stepOnce();
		} else {
			owed += (now - last) / 1000 * rate;
			var todo = Math.floor(owed);
			owed -= todo;
			while (todo-- > 0 && cur.step < steps)
				stepOnce();
		}
		last = now;
		render();
		if (cur.step >= steps)
			setPlaying(false);
		else
			requestAnimationFrame(frame);
	}

	el('play').addEventListener('click', function () { setPlaying(!playing); });
	el('first').addEventListener('click', function () { setPlaying(false); go(0); });
	el('last').addEventListener('click', function () { setPlaying(false); go(steps); });
	el('back').addEventListener('click', function () { setPlaying(false); go(cur.step - 1); });
	el('forward').addEventListener('click', function () { setPlaying(false); go(cur.step + 1); });
	slider.addEventListener('input', function () { setPlaying(false); go(Number(slider.value)); });
	document.addEventListener('keydown', function (e) {
		/* a focused control keeps its own keys */
		if (e.target && /^(SELECT|BUTTON|INPUT)$/.test(e.target.tagName))
			return;
		var keys = { ArrowLeft: -1, ArrowRight: 1 };
		if (e.key in keys) {
			setPlaying(false);
			go(cur.step + keys[e.key]);
		} else if (e.key === ' ') {
			setPlaying(!playing);
		} else if (e.key === 'Home') {
			go(0);
		} else if (e.key === 'End') {
			go(steps);
		} else {
			return;
		}
		e.preventDefault();
	});

	/* #step=K in the address opens the page at step K */
	var hash = /^#step=(\d+)$/.exec(location.hash);
	go(hash ? Number(hash[1]) : 0);

	/* what the browser test reads (tests/browser/): the state of each node
	 * as the digit red + 2 blue + 4 incomplete, row by row */
	window.pebblesimView = {
		steps: steps,
		errors: errors,
		firstPassMs: firstPassMs,
		step: function () { return cur.step; },
		seek: function (k) { setPlaying(false); go(k); return cur.step; },
		codes: function (name) {
			var arr = byName[name], out = new Array(arr.nodes);
			for (var k = 0; k < arr.nodes; k++)
				out[k] = arr.state[k];
			return out.join('');
		},
		cells: function (name) {
			var arr = byName[name];
			return { br: arr.br, bc: arr.bc, rows: arr.cellRows, cols: arr.cellCols,
				counts: Array.prototype.slice.call(arr.counts) };
		},
		shapes: function () {
			var out = {};
			arrays.forEach(function (arr) { out[arr.name] = arr.cols; });
			return out;
		},
		moves: function () {
			var total = 0;
			ops.forEach(function (op) { total += opMoves(op); });
			return total;
		},
		red: function () { return cur.red; },
		peak: function () { return final.peak; }
	};
	document.body.setAttribute('data-ready', '1');
})();
