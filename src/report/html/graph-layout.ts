import dagre from '@dagrejs/dagre';
import { planLevels } from '../../workflow/graph.js';

/** A step as the graph shows it. */
export interface GraphNode {
  id: string;
  needs: readonly string[];
  /** @default NODE_HEIGHT */
  height?: number;
}

/** Where each step's box is (its top-left corner) and each edge's points, in SVG units. */
export interface GraphLayout {
  width: number;
  height: number;
  nodes: { id: string; x: number; y: number; height: number }[];
  /** From the needed step to the step that needs it. */
  edges: { from: string; to: string; points: { x: number; y: number }[] }[];
}

export const NODE_WIDTH = 210;
export const NODE_HEIGHT = 66;
/** A foreach step's box has a fourth line: how its items ended. */
export const FOREACH_NODE_HEIGHT = 84;
const RANK_GAP = 44;
const NODE_GAP = 24;
const MARGIN = 12;
/**
 * dagre lays out 60 steps in well under 0.2 s but 1,000 in seconds to a
 * minute: above this, steps are placed by level (the plan's parallel groups)
 * so that a big run's report is still written in well under a second.
 */
export const DAGRE_MAX_STEPS = 60;

/** Lays the steps out top to bottom, each below the steps it needs. */
export function layoutGraph(nodes: readonly GraphNode[]): GraphLayout {
  const known = new Set(nodes.map((node) => node.id));
  const clean = nodes.map((node) => ({ id: node.id, height: node.height ?? NODE_HEIGHT, needs: node.needs.filter((need) => need !== node.id && known.has(need)) }));
  // One step is placed where dagre would put it; dagre's first layout in a process costs about 30 ms.
  return clean.length > 1 && clean.length <= DAGRE_MAX_STEPS ? layoutWithDagre(clean) : layoutByLevel(clean);
}

interface Point {
  x: number;
  y: number;
}

/**
 * The part of dagre's graph used here. dagre's declarations import their own
 * modules without extensions, which NodeNext resolution does not follow: the
 * graph would be `any`, so what is called on it is typed here.
 */
interface DagreGraph {
  setGraph(label: { rankdir: 'TB'; nodesep: number; ranksep: number; marginx: number; marginy: number }): void;
  setDefaultEdgeLabel(label: () => object): void;
  setNode(id: string, label: { width: number; height: number }): void;
  setEdge(from: string, to: string): void;
  graph(): { width?: number; height?: number };
  node(id: string): Point;
  edges(): { v: string; w: string }[];
  edge(edge: { v: string; w: string }): { points?: Point[] };
}

const layoutLibrary = dagre as unknown as { graphlib: { Graph: new (options: { multigraph: boolean }) => DagreGraph }; layout(graph: DagreGraph): void };

function layoutWithDagre(nodes: readonly Required<GraphNode>[]): GraphLayout {
  const graph = new layoutLibrary.graphlib.Graph({ multigraph: false });
  graph.setGraph({ rankdir: 'TB', nodesep: NODE_GAP, ranksep: RANK_GAP, marginx: MARGIN, marginy: MARGIN });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of nodes) graph.setNode(node.id, { width: NODE_WIDTH, height: node.height });
  for (const node of nodes) for (const need of node.needs) graph.setEdge(need, node.id);
  layoutLibrary.layout(graph);
  const size = graph.graph();
  return {
    width: Math.ceil(size.width ?? 0),
    height: Math.ceil(size.height ?? 0),
    // dagre gives centres; the SVG wants corners.
    nodes: nodes.map((node) => {
      const placed = graph.node(node.id);
      return { id: node.id, x: placed.x - NODE_WIDTH / 2, y: placed.y - node.height / 2, height: node.height };
    }),
    edges: graph.edges().map((edge) => ({ from: edge.v, to: edge.w, points: graph.edge(edge).points ?? [] })),
  };
}

/** One row per level of the plan, steps in file order; edges from the bottom of a box to the top of the next. */
function layoutByLevel(nodes: readonly Required<GraphNode>[]): GraphLayout {
  const levels = planLevels(nodes);
  const placedIds = new Set(levels.flat());
  // Steps on a cycle never get a level (validation refuses those workflows; an old record might have one).
  const leftOver = nodes.filter((node) => !placedIds.has(node.id)).map((node) => node.id);
  if (leftOver.length > 0) levels.push(leftOver);
  const rowHeight = nodes.reduce((max, node) => Math.max(max, node.height), NODE_HEIGHT);
  const heights = new Map(nodes.map((node) => [node.id, node.height]));
  const position = new Map<string, { x: number; y: number; height: number }>();
  let width = 0;
  levels.forEach((ids, level) => {
    ids.forEach((id, column) => position.set(id, { x: MARGIN + column * (NODE_WIDTH + NODE_GAP), y: MARGIN + level * (rowHeight + RANK_GAP), height: heights.get(id)! }));
    width = Math.max(width, MARGIN * 2 + ids.length * (NODE_WIDTH + NODE_GAP) - NODE_GAP);
  });
  const edges: GraphLayout['edges'] = [];
  for (const node of nodes) {
    const to = position.get(node.id)!;
    for (const need of node.needs) {
      const from = position.get(need)!;
      edges.push({ from: need, to: node.id, points: [{ x: from.x + NODE_WIDTH / 2, y: from.y + from.height }, { x: to.x + NODE_WIDTH / 2, y: to.y }] });
    }
  }
  return {
    width,
    height: MARGIN * 2 + levels.length * (rowHeight + RANK_GAP) - RANK_GAP,
    nodes: nodes.map((node) => ({ id: node.id, ...position.get(node.id)! })),
    edges,
  };
}
