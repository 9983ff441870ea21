// @ts-check
// What every chart of the report is drawn with (www/report/charts.js says how
// the parts load): colours, MiB, the Chart.js options and the phase marks'
// plugin, a figure with its controls, and the count of plotted values that a
// headless check reads.
(() => {
	"use strict";

	const MIB = 2 ** 20;
	const COLORS = ["#4e9af1", "#f1a14e", "#6fd37a", "#e8615a", "#b48ef0", "#e5d15c", "#5cd6d6", "#f07fc0", "#a0a0a0", "#8fbf4f"];
	const color = (index) => COLORS[index % COLORS.length];
	const mib = (bytes) => (bytes == null ? null : bytes / MIB);

	/** Vertical lines at the phase marks, drawn through Chart.js's plugin hook. */
	const phaseMarks = {
		id: "phaseMarks",
		afterDatasetsDraw(chart, _args, options) {
			const { ctx, chartArea, scales } = chart;
			ctx.save();
			ctx.strokeStyle = "#888";
			ctx.fillStyle = "#bbb";
			ctx.font = "11px monospace";
			ctx.setLineDash([2, 4]);
			for (const phase of options.phases ?? []) {
				const x = scales.x.getPixelForValue(phase.start / 1000);
				if (x < chartArea.left || x > chartArea.right) continue;
				ctx.beginPath();
				ctx.moveTo(x, chartArea.top);
				ctx.lineTo(x, chartArea.bottom);
				ctx.stroke();
				ctx.save();
				ctx.translate(x + 3, chartArea.top + 4);
				ctx.rotate(Math.PI / 2);
				ctx.fillText(phase.name, 0, 0);
				ctx.restore();
			}
			ctx.restore();
		},
	};

	const baseOptions = (xTitle, yTitle) => ({
		animation: false,
		maintainAspectRatio: false,
		color: "#ddd",
		scales: {
			x: { title: { display: true, text: xTitle, color: "#ddd" }, ticks: { color: "#ccc" }, grid: { color: "#333" } },
			y: { title: { display: true, text: yTitle, color: "#ddd" }, ticks: { color: "#ccc" }, grid: { color: "#333" }, beginAtZero: true },
		},
		plugins: { legend: { labels: { color: "#ddd", boxWidth: 12 } } },
	});

	const pointsOf = (datasets) =>
		datasets.reduce((sum, d) => sum + d.data.filter((v) => v != null && (typeof v !== "object" || v.y != null)).length, 0);

	/** A figure with a title, an optional control and a canvas; returns its parts. */
	function figure(root, id, title, caption) {
		const element = document.createElement("figure");
		element.className = "chart";
		element.dataset.chart = id;
		const heading = document.createElement("h2");
		heading.textContent = title;
		const controls = document.createElement("div");
		controls.className = "controls";
		const box = document.createElement("div");
		box.className = "canvas-box";
		const canvas = document.createElement("canvas");
		box.append(canvas);
		const note = document.createElement("figcaption");
		note.textContent = caption;
		element.append(heading, controls, box, note);
		root.append(element);
		return { element, controls, canvas, note };
	}

	function select(controls, label, options, onChange) {
		const wrapper = document.createElement("label");
		wrapper.textContent = `${label} `;
		const input = document.createElement("select");
		for (const [value, text] of options) input.add(new Option(text, value));
		input.addEventListener("change", () => onChange(input.value));
		wrapper.append(input);
		controls.append(wrapper);
		return input;
	}

	function stackedOptions(xTitle) {
		const options = baseOptions(xTitle, "MiB");
		options.scales.x.stacked = true;
		options.scales.y.stacked = true;
		options.scales.y.beginAtZero = true;
		return options;
	}

	Object.assign(window.OcrReport, { color, mib, phaseMarks, baseOptions, pointsOf, figure, select, stackedOptions });
})();
