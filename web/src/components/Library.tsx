import { type DragEvent, useEffect, useState } from 'react';
import { api, type Capabilities, type LibraryDocument } from '../api-client.ts';

/** A file on its way into the library: how much is sent, and how it ended. */
interface Upload {
  key: number;
  name: string;
  sent: number;
  error: string | null;
  done: boolean;
}

function size(bytes: number): string {
  return bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

let nextKey = 0;

/**
 * The signed-in user's library on the new-research form: files dropped here (or chosen) are sent one
 * by one, each with its progress and, when the server refuses it, the reason; the documents already
 * there can be removed, and ticked to limit a research to them (all of them by default).
 */
export function Library({
  online,
  limits,
  selected,
  onSelect,
  onChanged,
}: {
  online: boolean;
  limits: Capabilities['library'] | undefined;
  /** The documents a research is limited to; null: all of them. */
  selected: string[] | null;
  onSelect: (ids: string[] | null) => void;
  /** The library changed (its first document makes it a folder the server lists). */
  onChanged: () => void;
}) {
  const [documents, setDocuments] = useState<LibraryDocument[]>([]);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [dragging, setDragging] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    api.documents().then(
      (listed) => setDocuments(listed.documents),
      (caught: Error) => setError(caught.message),
    );
  }, []);

  const update = (key: number, change: Partial<Upload>) =>
    setUploads((all) => all.map((upload) => (upload.key === key ? { ...upload, ...change } : upload)));

  async function add(files: File[]) {
    const queued = files.map((file) => ({ file, key: nextKey++ }));
    setUploads((all) => [
      ...all.filter((upload) => !upload.done),
      ...queued.map(({ file, key }) => ({ key, name: file.name, sent: 0, error: null, done: false })),
    ]);
    let added = false;
    for (const { file, key } of queued) {
      if (limits && file.size > limits.fileBytes) {
        update(key, { error: `larger than ${size(limits.fileBytes)}` });
        continue;
      }
      try {
        const document = await api.uploadDocument(file, (sent) => update(key, { sent }));
        setDocuments((all) => [document, ...all]);
        // A document added while some are ticked is ticked too: the person just chose it.
        if (selected !== null) onSelect([...selected, document.id]);
        update(key, { sent: 1, done: true });
        added = true;
      } catch (caught) {
        update(key, { error: (caught as Error).message });
      }
    }
    if (added) onChanged();
  }

  async function remove(document: LibraryDocument) {
    setError(null);
    try {
      await api.removeDocument(document.id);
      setDocuments((all) => all.filter((each) => each.id !== document.id));
      if (selected !== null) onSelect(selected.filter((id) => id !== document.id));
      onChanged();
    } catch (caught) {
      setError(`${document.name}: ${(caught as Error).message}`);
    }
  }

  const drop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    if (online) void add([...event.dataTransfer.files]);
  };
  const chosen = selected ?? documents.map((document) => document.id);

  return (
    <fieldset className="library">
      <legend>Your library</legend>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: the file input inside is the accessible way in; dropping is a shortcut */}
      <div
        className={`drop-zone${dragging ? ' dragging' : ''}`}
        data-testid="library-drop-zone"
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={drop}
      >
        <label>
          Drop files here, or choose them
          <input
            type="file"
            multiple
            disabled={!online}
            accept=".md,.markdown,.txt,.rst,.adoc,.asciidoc,.html,.htm,.xhtml,.pdf,.docx,.epub,.odt,.odp,.pptx,.csv,.tsv,.xlsx,.ods,.1,.2,.3,.4,.5,.6,.7,.8,.9,.gz"
            onChange={(event) => {
              const files = [...(event.target.files ?? [])];
              event.target.value = '';
              void add(files);
            }}
          />
        </label>
        <small>
          Word, PDF, EPUB, OpenDocument, PowerPoint, spreadsheets, HTML, Markdown and text
          {limits ? `; up to ${size(limits.fileBytes)} a file, ${size(limits.limitBytes)} in all` : ''}.
        </small>
      </div>
      {uploads.length > 0 && (
        <ul className="uploads" aria-label="Files being added">
          {uploads.map((upload) => (
            <li key={upload.key} className={upload.error ? 'refused' : upload.done ? 'added' : ''}>
              <span>{upload.name}</span>
              {upload.error ? (
                <span role="alert">Not added: {upload.error}</span>
              ) : upload.done ? (
                <span>Added</span>
              ) : (
                <progress max={1} value={upload.sent} aria-label={`Sending ${upload.name}`} />
              )}
            </li>
          ))}
        </ul>
      )}
      {documents.length > 0 && (
        <ul className="library-documents" aria-label="Documents in your library">
          {documents.map((document) => (
            <li key={document.id}>
              <label className="inline">
                <input
                  type="checkbox"
                  checked={chosen.includes(document.id)}
                  onChange={(event) => {
                    const next = event.target.checked
                      ? [...chosen, document.id]
                      : chosen.filter((id) => id !== document.id);
                    onSelect(next.length === documents.length ? null : next);
                  }}
                />
                {document.title}
                <small>
                  {document.name} · {size(document.size)}
                </small>
              </label>
              <button
                type="button"
                className="link"
                onClick={() => void remove(document)}
                aria-label={`Remove ${document.name}`}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </fieldset>
  );
}
