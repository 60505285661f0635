import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compareSubjects, digestSubject, isSubjectFile, subjectList } from '../../src/util/subject.ts';
import { readValidated } from '../../src/util/zodfile.ts';

function model(): string {
  const dir = mkdtempSync(join(tmpdir(), 'subject-'));
  mkdirSync(join(dir, 'onnx'));
  for (const [f, text] of [
    ['onnx/model.onnx', 'weights'],
    ['onnx/model.onnx_data', 'external data'],
    ['config.json', '{}'],
    ['generation_config.json', '{}'],
    ['tokenizer.json', '{"v":1}'],
    ['tokenizer_config.json', '{"chat_template":"{{x}}"}'],
    ['chat_template.jinja', '{{ messages }}'],
    ['README.md', 'docs'],
  ])
    writeFileSync(join(dir, f!), text!);
  return dir;
}

describe('the subject: every file the model loads', () => {
  it('covers weights, external data, config, generation config, tokenizer, chat template, adapters', async () => {
    const dir = model();
    const d = await digestSubject(dir);
    expect(Object.keys(d)).toEqual([
      'chat_template.jinja',
      'config.json',
      'generation_config.json',
      'onnx/model.onnx',
      'onnx/model.onnx_data',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    for (const f of [
      'adapter_config.json',
      'adapter_model.safetensors',
      'adapters/lora/weights.bin',
      'special_tokens_map.json',
    ])
      expect(isSubjectFile(f), f).toBe(true);
    expect(isSubjectFile('README.md')).toBe(false);
  });

  it('a swapped tokenizer, config or template, or an added adapter, is a mismatch', async () => {
    const dir = model();
    const subjects = subjectList(await digestSubject(dir));
    expect(compareSubjects(subjects, await digestSubject(dir))).toBeNull();
    for (const f of ['tokenizer.json', 'config.json', 'chat_template.jinja']) {
      const d = model();
      writeFileSync(join(d, f), 'swapped');
      // Same file names, other bytes: only the digest can tell.
      expect(compareSubjects(subjects, await digestSubject(d)), f).toMatch(
        new RegExp(`^${f}: sha256 .* differs`),
      );
    }
    const d = model();
    writeFileSync(join(d, 'adapter_model.safetensors'), 'lora');
    expect(compareSubjects(subjects, await digestSubject(d))).toMatch(
      /adapter_model.safetensors: loaded by the model but not/,
    );
  });

  it('refuses symlinks and special files anywhere in the folder, naming the path', async () => {
    const dir = model();
    const outside = join(mkdtempSync(join(tmpdir(), 'outside-')), 'w.onnx');
    writeFileSync(outside, 'outside');
    symlinkSync(outside, join(dir, 'onnx', 'linked.onnx'));
    await expect(digestSubject(dir)).rejects.toThrow(/onnx\/linked.onnx: a symlink in the model directory/);
    const fifo = model();
    execFileSync('mkfifo', [join(fifo, 'tokenizer.model')]);
    await expect(digestSubject(fifo)).rejects.toThrow(/tokenizer.model: a FIFO/);
    const linkedDir = join(mkdtempSync(join(tmpdir(), 'ld-')), 'm');
    symlinkSync(model(), linkedDir);
    await expect(digestSubject(linkedDir)).rejects.toThrow(/is a symlink/);
  });
});

describe('readValidated', () => {
  it('never echoes file contents in a parse error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'zodfile-'));
    const secret = 'root:*:20213:0:99999:7:::';
    for (const name of ['shadow.json', 'shadow.yaml']) {
      const f = join(dir, name);
      writeFileSync(f, `${secret}\n{: [`);
      let message = '';
      try {
        readValidated(f, z.object({ version: z.string() }));
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(new RegExp(`^${f}: (not valid (JSON|YAML)|\\(root\\))`));
      expect(message).not.toContain('root:*');
      expect(message).not.toContain('20213');
    }
  });
});
