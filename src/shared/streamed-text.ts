/**
 * The text a run has streamed so far, rebuilt from its `report-delta` events in order: each step's
 * piece in the order the steps first wrote, a step that started over (a delta at offset 0 again)
 * replaced by its new attempt. Pure: the web UI and every server endpoint assemble text with it.
 */
export class StreamedText {
  private readonly pieces = new Map<string, string>();

  /** Applies one delta; false when it does not continue its piece (a gap or a repeat: it is ignored). */
  apply(delta: { key: string; offset: number; text: string }): boolean {
    const current = this.pieces.get(delta.key) ?? '';
    if (delta.offset === 0) this.pieces.set(delta.key, delta.text);
    else if (delta.offset === current.length) this.pieces.set(delta.key, current + delta.text);
    else return false;
    return true;
  }

  /** Everything streamed, in order. */
  get text(): string {
    return [...this.pieces.values()].join('');
  }
}
