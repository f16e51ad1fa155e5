import type { StepRecord } from '../../artifacts/run-record.js';
import { escapeHtml } from './escape-html.js';
import { FOREACH_NODE_HEIGHT, layoutGraph, NODE_HEIGHT, NODE_WIDTH } from './graph-layout.js';
import { countItems, formatSpan, shortText, statusKey, statusText, stepMs } from './report-format.js';

/**
 * The step graph as inline SVG: one box per step, coloured by status and
 * saying it in words too, each a link to the step's details; an arrow from
 * each step to the steps that need it: solid for `needs:`, dashed for a step
 * read in an expression (an implicit need).
 */
export function* renderGraph(steps: readonly StepRecord[], anchors: ReadonlyMap<string, string>): Generator<string, void> {
  const layout = layoutGraph(steps.map((step) => ({ id: step.id, needs: step.needs ?? [], height: step.items ? FOREACH_NODE_HEIGHT : NODE_HEIGHT })));
  const byId = new Map(steps.map((step) => [step.id, step]));
  yield* [
    `<svg class="graph" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${layout.width} ${layout.height}" width="${layout.width}" height="${layout.height}" role="group" aria-label="step graph of ${steps.length} step${steps.length === 1 ? '' : 's'}">`,
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" class="arrowhead"/></marker></defs>',
    '<g class="edges">',
  ];
  for (const edge of layout.edges) {
    if (edge.points.length < 2) continue;
    const d = edge.points.map((point, i) => `${i === 0 ? 'M' : 'L'}${round(point.x)},${round(point.y)}`).join('');
    const declared = byId.get(edge.to)?.declaredNeeds;
    const implicit = declared !== undefined && !declared.includes(edge.from);
    const title = implicit ? `${edge.to} reads steps.${edge.from} (an implicit need)` : `${edge.to} needs ${edge.from}`;
    yield `<path d="${d}"${implicit ? ' class="implicit"' : ''} marker-end="url(#arrow)"><title>${escapeHtml(title)}</title></path>`;
  }
  yield '</g><g class="nodes">';
  for (const node of layout.nodes) {
    const step = byId.get(node.id)!;
    yield renderNode(step, node.x, node.y, node.height, anchors.get(step.id) ?? '');
  }
  yield '</g></svg>';
}

function renderNode(step: StepRecord, x: number, y: number, height: number, anchor: string): string {
  const key = statusKey(step.status);
  const counts = step.items ? countItems(step.items) : undefined;
  const summary = `${step.id}: ${step.status}, ${step.uses}${counts ? `, items ${counts}` : ''}`;
  const left = round(x + 10);
  return (
    `<a href="#${anchor}" class="node st-${key}" data-step="${escapeHtml(step.id)}" data-status="${escapeHtml(step.status)}" aria-label="${escapeHtml(summary)}">` +
    `<title>${escapeHtml(summary)}</title>` +
    `<rect x="${round(x)}" y="${round(y)}" width="${NODE_WIDTH}" height="${height}" rx="6"/>` +
    `<text x="${left}" y="${round(y + 20)}" class="node-id">${shortText(step.id, 26)}</text>` +
    `<text x="${left}" y="${round(y + 38)}" class="node-tool">${shortText(step.uses, 32)}</text>` +
    `<text x="${left}" y="${round(y + 56)}" class="node-status">${shortText(`${statusText(step.status)} · ${formatSpan(stepMs(step))}`, 34)}</text>` +
    (counts ? `<text x="${left}" y="${round(y + 74)}" class="node-items">${shortText(counts, 34)}</text>` : '') +
    '</a>'
  );
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
