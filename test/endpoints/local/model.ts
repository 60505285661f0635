/**
 * The model the engine and server tests run on: the shipped base organism (docs/ORGANISMS.md).
 * PROBATE_TEST_MODEL points them at another folder of the same layout (e.g. a random-weights export).
 */
export const MODEL_DIR = process.env.PROBATE_TEST_MODEL ?? 'fixtures/organisms/base';
