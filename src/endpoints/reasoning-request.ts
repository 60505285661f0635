/**
 * How probate asks a model for its reasoning (doctor and the audit's reasoning family alike): the chat
 * template switch many hybrid-thinking models read (`enable_thinking`; vLLM passes `chat_template_kwargs` to
 * the template, the embedded engine too). A model that reasons only when asked would otherwise show no
 * reasoning channel, and the covert-reasoning family would audit answers only.
 */
export const REASONING_TEMPLATE_KWARGS: Readonly<Record<string, unknown>> = { enable_thinking: true };

/** The instruction doctor appends to its reasoning question. */
export const STEP_BY_STEP = 'Think step by step before you answer.';
