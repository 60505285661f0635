import { LocalEngine, type LocalEngineOptions } from './engine.ts';

export type { GeneratedSample, GenerateOptions, GenerateResult, LocalEngineOptions } from './engine.ts';
export { LocalEngine } from './engine.ts';
export type { ScoredToken } from './sampling.ts';

/** Opens a Hugging Face ONNX model folder (config.json, tokenizer files, onnx/model.onnx) as an endpoint. */
export function openLocalEndpoint(dir: string, opts: LocalEngineOptions = {}): Promise<LocalEngine> {
  return LocalEngine.open(dir, opts);
}
