import MarkdownIt from 'markdown-it';

/** Raw HTML in a report is shown as text, never run: sources can contain anything. */
const markdown = new MarkdownIt({ html: false, linkify: true });

function escapeAttribute(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!,
  );
}

/**
 * Report Markdown as safe HTML with `[n]` citations linked to the sources list (the source's title
 * as a hover preview) and flagged claims marked.
 */
export function renderReport(text: string, sources: { citation: number | null; title: string; url: string }[]): string {
  const byNumber = new Map(
    sources.filter((source) => source.citation !== null).map((source) => [source.citation!, source]),
  );
  return markdown
    .render(text)
    .replace(/\[(\d+(?:, \d+)*)\]/g, (_match, list: string) =>
      list
        .split(', ')
        .map((item) => {
          const source = byNumber.get(Number(item));
          return source
            ? `<a class="citation" href="#source-${item}" title="${escapeAttribute(`${source.title} — ${source.url}`)}">[${item}]</a>`
            : `[${item}]`;
        })
        .join(''),
    )
    .replace(
      /<strong>\[unverified\]<\/strong>/g,
      '<mark class="unverified" title="Its cited source does not support this claim">unverified</mark>',
    )
    .replace(
      /<strong>\[uncited\]<\/strong>/g,
      '<mark class="unverified uncited" title="This claim cites no source of the report">uncited</mark>',
    );
}
