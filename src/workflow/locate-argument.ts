import type { SourceLocation } from '../errors.js';
import { locateKeys, locatePath, type YamlSource } from '../config/yaml-source.js';
import type { ArgumentProblem } from '../scheduler/validate-args.js';

/**
 * Where an argument problem of the step at `index` is written: the key or the
 * value it is about; for a missing argument, the mapping that lacks it (the
 * step's `with`, or its `uses` when it has no `with`).
 */
export function locateArgumentProblem(source: YamlSource, index: number, problem: ArgumentProblem): SourceLocation {
  const path = ['steps', index, 'with', ...problem.path];
  if (problem.target !== 'missing') return locatePath(source, path, problem.target === 'key' ? 'key' : 'value');
  if (problem.path.length > 0) return locatePath(source, path, 'key');
  const keys = locateKeys(source, ['steps', index]);
  return keys.with ?? keys.uses ?? locatePath(source, ['steps', index]);
}
