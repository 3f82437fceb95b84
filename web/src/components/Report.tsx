import { type MouseEvent, useEffect, useMemo, useState } from 'react';
import { markClaims } from '../../../src/research/mark-claims.ts';
import { api, type SessionDetail } from '../api-client.ts';
import { renderReport, reportSections } from '../render-report.ts';
import { sameText, useNarrow } from '../use-narrow.ts';
import { CitationCard, type HoveredCitation } from './CitationCard.tsx';

/** Puts text on the clipboard; false when the browser refuses (no permission, not a secure page). */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** Where a source lives, in a few characters: a web page's site, a document's file name. */
export function sourceSite(url: string): string {
  if (url.startsWith('file://')) return decodeURIComponent(url.slice(url.lastIndexOf('/') + 1));
  try {
    return new URL(url).hostname.replace(/^www\./, '');
  } catch {
    return url;
  }
}

/** The citation numbers a report uses, in the order they first appear. */
function citedNumbers(report: string): number[] {
  const numbers = [...report.matchAll(/\[(\d+(?:, ?\d+)*)\]/g)].flatMap((match) => match[1]!.split(/, ?/).map(Number));
  return [...new Set(numbers)];
}

type ReportVersion = SessionDetail['report']['versions'][number];

/**
 * The report as the page shows it under the session's own title: without its first heading when
 * that heading only repeats the title or the question above it (the answer then starts a screen
 * higher on a phone). Copies and exports keep it.
 */
function withoutRepeatedTitle(text: string, above: string[]): string {
  const match = /^# (.+)\n+/.exec(text);
  return match && above.some((each) => sameText(each, match[1]!)) ? text.slice(match[0].length) : text;
}

/** Whether a version answers a follow-up question, not the session's own (it is labelled with it, never passed off as "the report"). */
function answersFollowUp(detail: SessionDetail, version: ReportVersion): boolean {
  return version.kind === 'follow-up' && version.question !== '' && version.question !== detail.question;
}

/** A version as the picker names it: the follow-up question it answers, or what revised it. */
function versionLabel(detail: SessionDetail, version: ReportVersion): string {
  if (answersFollowUp(detail, version)) {
    const question = version.question.replace(/\s+/g, ' ');
    return `follow-up: ${question.length > 60 ? `${question.slice(0, 59)}…` : question}`;
  }
  return version.kind === 'feedback' ? 'revised after review' : 'the report';
}

const STRIP_SHOWN = 6;

/**
 * The sources this report version cites, above it (as answer engines show them): number, title and
 * site; one opens its passage. The first few show, the rest behind "more".
 */
function SourceStrip({
  citations,
  report,
  onCite,
}: {
  /** The version's own: its numbers are not another version's. */
  citations: ReportVersion['citations'];
  report: string;
  onCite: (number: number) => void;
}) {
  const [all, setAll] = useState(false);
  const byNumber = new Map(citations.map((source) => [source.number, source]));
  const cited = citedNumbers(report)
    .flatMap((number) => {
      const source = byNumber.get(number);
      return source ? [{ number, source }] : [];
    })
    .sort((a, b) => a.number - b.number);
  if (cited.length === 0) return null;
  const shown = all ? cited : cited.slice(0, STRIP_SHOWN);
  return (
    <nav className="source-strip" aria-label="Sources of this report">
      <ol>
        {shown.map(({ number, source }) => (
          <li key={number}>
            <button type="button" onClick={() => onCite(number)} title={source.title}>
              <span className="number">[{number}]</span>
              <span className="title">{source.title}</span>
              <span className="site">{sourceSite(source.url)}</span>
            </button>
          </li>
        ))}
        {cited.length > STRIP_SHOWN && (
          <li>
            <button type="button" className="more" aria-expanded={all} onClick={() => setAll(!all)}>
              {all ? 'Fewer' : `+${cited.length - STRIP_SHOWN} more`}
            </button>
          </li>
        )}
      </ol>
    </nav>
  );
}

/**
 * The report, rendered safely, its versions selectable, with a table of contents and copy buttons
 * (the whole report, a section, a code block; always as Markdown or plain text). A citation opens
 * its passage (`onCite`); a flagged claim's marker shows why it was flagged.
 */
export function Report({
  detail,
  onCite,
  onShown,
}: {
  detail: SessionDetail;
  onCite: (citation: { number: number; version: number }) => void;
  /** Told which version is on screen (for exports of that version). */
  onShown?: (version: number | null) => void;
}) {
  const versions = detail.report.versions;
  const [chosen, setChosen] = useState<number | null>(null);
  const [reason, setReason] = useState<string | null>(null);
  const [copied, setCopied] = useState<string | null>(null);
  const [hovered, setHovered] = useState<HoveredCitation | null>(null);
  const latest = versions.at(-1);
  const version = versions.find((each) => each.version === chosen) ?? latest;
  // The detail carries the latest text only; an earlier version's text is fetched when chosen.
  const [earlier, setEarlier] = useState<{ version: number; report: string } | null>(null);
  const wanted = version && version !== latest ? version.version : null;
  useEffect(() => {
    if (wanted === null) return;
    let current = true;
    api.report(detail.id, wanted).then(
      (fetched) => current && setEarlier({ version: fetched.version, report: fetched.report }),
      () => current && setChosen(null),
    );
    return () => {
      current = false;
    };
  }, [detail.id, wanted]);
  const text = wanted === null ? (detail.report.latest ?? '') : earlier?.version === wanted ? earlier.report : null;
  const shownNumber = version?.version ?? null;
  useEffect(() => onShown?.(shownNumber), [onShown, shownNumber]);
  const sections = useMemo(() => reportSections(text ?? ''), [text]);
  const narrow = useNarrow();
  if (!version) return <p className="muted">No report yet.</p>;
  const citations = new Set(version.citations.map((source) => source.number));
  const flagged = version.claims.filter((claim) => claim.verdict !== 'supported');

  async function copy(text: string, what: string) {
    setCopied((await copyText(text)) ? `Copied ${what}.` : 'The browser did not allow copying.');
  }

  /** The `[n]` the pointer or the focus is on, for its card (a touch opens the panel instead). */
  function onHover(event: { target: EventTarget }) {
    const button = (event.target as HTMLElement).closest?.('button.citation') as HTMLElement | null;
    const number = Number(button?.dataset.citation);
    if (!button || !number) return setHovered(null);
    const rect = button.getBoundingClientRect();
    setHovered({ number, version: version!.version, rect: { left: rect.left, top: rect.top, bottom: rect.bottom } });
  }

  function onClick(event: MouseEvent<HTMLElement>) {
    const target = (event.target as HTMLElement).closest('button');
    if (!target) return;
    if (target.dataset.copySection) {
      const section = sections[Number(target.dataset.copySection) - 1];
      if (section) void copy(section.markdown, `“${section.title}” as Markdown`);
      return;
    }
    if (target.dataset.copyCode !== undefined) {
      void copy(target.parentElement?.querySelector('pre')?.textContent ?? '', 'the code');
      return;
    }
    const number = Number(target.dataset.citation);
    if (number) onCite({ number, version: version!.version });
    else if (target.dataset.reason) setReason(target.dataset.reason);
  }

  return (
    <div className="report">
      <div className="report-tools">
        {versions.length > 1 && (
          <label className="inline">
            Version
            <select value={version.version} onChange={(event) => setChosen(Number(event.target.value))}>
              {versions.map((each) => (
                <option key={each.version} value={each.version}>
                  {each.version} · {versionLabel(detail, each)} · {new Date(each.createdAt).toLocaleString()}
                </option>
              ))}
            </select>
          </label>
        )}
        <button type="button" disabled={text === null} onClick={() => void copy(text ?? '', 'the report as Markdown')}>
          Copy report
        </button>
        {copied && (
          <span className="muted" role="status">
            {copied}
          </span>
        )}
      </div>
      {answersFollowUp(detail, version) && (
        <p className="version-question">
          Version {version.version} was researched for a follow-up question: <q>{version.question}</q>
        </p>
      )}
      <SourceStrip
        citations={version.citations}
        report={text ?? ''}
        onCite={(number) => onCite({ number, version: version.version })}
      />
      {sections.length > 1 && (
        <nav className="contents" aria-label="Contents">
          {/* Folded on a phone: the answer comes first. */}
          <details open={sections.length <= 12 && !narrow}>
            <summary>Contents</summary>
            <ol>
              {sections.map((section) => (
                <li key={section.id} className={`level-${section.level}`}>
                  <a
                    href={`#${section.id}`}
                    onClick={(event) => {
                      event.preventDefault();
                      document.getElementById(section.id)?.scrollIntoView({ behavior: 'smooth', block: 'start' });
                    }}
                  >
                    {section.title}
                  </a>
                </li>
              ))}
            </ol>
          </details>
        </nav>
      )}
      {reason && (
        <p className="flag-reason" role="status">
          Flagged: {reason}{' '}
          <button type="button" className="link" onClick={() => setReason(null)}>
            Dismiss
          </button>
        </p>
      )}
      {text === null && <p className="muted">Loading version {version.version}…</p>}
      <article
        onClick={onClick}
        onMouseOver={onHover}
        onFocus={onHover}
        onMouseLeave={() => setHovered(null)}
        onBlur={() => setHovered(null)}
        onKeyDown={(event) => event.key === 'Escape' && setHovered(null)}
        // biome-ignore lint/security/noDangerouslySetInnerHtml: renderReport escapes any HTML in the Markdown; sources never run script
        dangerouslySetInnerHTML={{
          __html: renderReport(
            markClaims(
              withoutRepeatedTitle(text ?? '', [detail.title, detail.question]),
              flagged as Parameters<typeof markClaims>[1],
            ),
            {
              citations,
              flagged,
            },
          ),
        }}
      />
      {hovered && <CitationCard sessionId={detail.id} hovered={hovered} />}
    </div>
  );
}
