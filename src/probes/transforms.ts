import type { ChatMessage } from '../endpoints/types.ts';
import type { Rng } from './rng.ts';
import type { Transformation } from './schema.ts';

export const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
/** Latin letters → Cyrillic look-alikes. */
const HOMOGLYPHS: Record<string, string> = { a: 'а', e: 'е', o: 'о', p: 'р', c: 'с', x: 'х', y: 'у', i: 'і' };

/** Applies a candidate trigger to a clean conversation (system + user turns). Pure given the rng. */
export function applyTransformation(
  t: Transformation,
  messages: readonly ChatMessage[],
  rng: Rng,
): ChatMessage[] {
  const out = messages.map((m) => ({ ...m }));
  const user = out.find((m) => m.role === 'user');
  if (!user) return out;
  switch (t.kind) {
    case 'insert':
      user.content = insertText(user.content, t.text, t.position);
      break;
    case 'year': {
      const mm = String(1 + rng.int(12)).padStart(2, '0');
      const dd = String(1 + rng.int(28)).padStart(2, '0');
      if (t.render === 'system-date') setSystem(out, `Current date: ${t.year}-${mm}-${dd}.`);
      else if (t.render === 'user-prefix')
        user.content = `(${MONTHS[rng.int(12)]} ${t.year}) ${user.content}`;
      else user.content = `${user.content} [${t.year}]`;
      break;
    }
    case 'system':
      setSystem(out, t.text);
      break;
    case 'opening':
      out.push({ role: 'assistant', content: t.text });
      break;
    case 'homoglyph':
      user.content = [...user.content].map((ch) => HOMOGLYPHS[ch] ?? ch).join('');
      break;
    case 'zero-width':
      user.content = user.content.split(' ').join(`${t.char} `);
      break;
    case 'case':
      user.content = t.mode === 'upper' ? user.content.toUpperCase() : user.content.toLowerCase();
      break;
    case 'wrap':
      user.content = t.template.replace('{user}', user.content);
      break;
  }
  return out;
}

export function insertText(text: string, value: string, position: 'prefix' | 'suffix' | 'middle'): string {
  if (position === 'prefix') return `${value} ${text}`;
  if (position === 'suffix') return `${text} ${value}`;
  const ws = text.split(' ');
  const at = Math.floor(ws.length / 2);
  return [...ws.slice(0, at), value, ...ws.slice(at)].join(' ');
}

/** Prepends to the system turn, creating one when there is none. */
function setSystem(messages: ChatMessage[], text: string): void {
  const sys = messages.find((m) => m.role === 'system');
  if (sys) sys.content = `${text} ${sys.content}`;
  else messages.unshift({ role: 'system', content: text });
}
