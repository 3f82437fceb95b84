import { type FormEvent, useEffect, useState } from 'react';
import { api, type Capabilities } from '../api-client.ts';
import { Library } from './Library.tsx';

/** The new-research form: offers only the sources and analyst this server has. */
export function NewResearch({ navigate, online }: { navigate: (path: string) => void; online: boolean }) {
  const [capabilities, setCapabilities] = useState<Capabilities | null>(null);
  const [question, setQuestion] = useState('');
  /** The server's folders to search (by name); all of them unless the person unticks some. */
  const [folders, setFolders] = useState<string[] | null>(null);
  const [search, setSearch] = useState<string[]>([]);
  /** The library documents to search (by id); null: the whole library. */
  const [libraryChoice, setLibraryChoice] = useState<string[] | null>(null);
  const [iterations, setIterations] = useState(3);
  const [breadth, setBreadth] = useState(3);
  const [model, setModel] = useState('');
  const [reviewOutline, setReviewOutline] = useState(false);
  /** Clarifying questions first, as answer engines ask them: on by default where a model can ask. */
  const [clarify, setClarify] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const loadCapabilities = () => {
    api.capabilities().then(setCapabilities, (caught: Error) => setError(caught.message));
  };
  useEffect(loadCapabilities, []);

  /** A model answers for this research (the server's, or one the person names): it can ask first. */
  const canClarify = Boolean(model.trim() || capabilities?.analyst.model);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = await api.createSession({
        question,
        settings: {
          maxIterations: iterations,
          queriesPerIteration: breadth,
          reviewOutline,
          ...(canClarify && clarify ? { clarify: true } : {}),
          ...(model.trim() ? { model: model.trim() } : {}),
        },
        ...(folders !== null || search.length || libraryChoice !== null ? { docs: chosenDocs(), search } : {}),
      });
      navigate(`/sessions/${session.id}`);
    } catch (caught) {
      setError((caught as Error).message);
    } finally {
      setBusy(false);
    }
  }

  async function importFile(file: File) {
    setBusy(true);
    setError(null);
    try {
      const session = await api.importSession(await file.text());
      navigate(`/sessions/${session.id}`);
    } catch (caught) {
      setError(`${file.name}: ${(caught as Error).message}`);
    } finally {
      setBusy(false);
    }
  }

  const libraryRoot = capabilities?.library.root ?? null;
  /** The server's folders, the library apart (it has its own panel). */
  const serverFolders = capabilities?.documentFolders.filter((folder) => folder.name !== libraryRoot) ?? [];
  const allFolders = serverFolders.map((folder) => folder.name);
  const chosen = folders ?? allFolders;
  /** What the research searches: the ticked server folders, and the library or the ticked documents in it. */
  const chosenDocs = () => [
    ...chosen,
    ...(libraryRoot === null
      ? []
      : libraryChoice === null
        ? [libraryRoot]
        : libraryChoice.map((id) => `${libraryRoot}/${id}`)),
  ];
  return (
    <form className="new-research" onSubmit={(event) => void submit(event)}>
      <h1>New research</h1>
      <label>
        Question
        <textarea
          required
          rows={3}
          value={question}
          onChange={(event) => setQuestion(event.target.value)}
          onKeyDown={(event) => {
            // Ctrl+Enter (or Cmd+Enter) starts the research; Enter alone is a new line.
            if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) event.currentTarget.form?.requestSubmit();
          }}
          placeholder="What do you want to know?"
        />
      </label>
      {allFolders.length > 0 && (
        <fieldset>
          <legend>Documents on this server</legend>
          {serverFolders.map((folder) => (
            <label key={folder.name} className="inline">
              <input
                type="checkbox"
                checked={chosen.includes(folder.name)}
                onChange={(event) =>
                  setFolders(
                    event.target.checked ? [...chosen, folder.name] : chosen.filter((name) => name !== folder.name),
                  )
                }
              />
              {folder.name}
            </label>
          ))}
        </fieldset>
      )}
      <Library
        online={online}
        limits={capabilities?.library}
        selected={libraryChoice}
        onSelect={setLibraryChoice}
        onChanged={loadCapabilities}
      />
      {capabilities && capabilities.searchProviders.length > 0 && (
        <fieldset>
          <legend>Web search</legend>
          {capabilities.searchProviders.map((provider) => (
            <label key={provider} className="inline">
              <input
                type="checkbox"
                checked={search.includes(provider)}
                onChange={(event) =>
                  setSearch(event.target.checked ? [...search, provider] : search.filter((each) => each !== provider))
                }
              />
              {provider}
            </label>
          ))}
        </fieldset>
      )}
      <div className="row">
        <label>
          Iterations
          <input
            type="number"
            min={1}
            max={10}
            value={iterations}
            onChange={(event) => setIterations(Number(event.target.value))}
          />
        </label>
        <label>
          Breadth
          <input
            type="number"
            min={1}
            max={8}
            value={breadth}
            onChange={(event) => setBreadth(Number(event.target.value))}
          />
        </label>
        <label>
          Model
          <input
            value={model}
            list="offered-models"
            onChange={(event) => setModel(event.target.value)}
            placeholder={capabilities?.analyst.model ?? 'extractive (no model)'}
          />
          <datalist id="offered-models">
            {capabilities?.models.map((name) => (
              <option key={name} value={name} />
            ))}
          </datalist>
        </label>
      </div>
      {canClarify && (
        <label className="inline">
          <input type="checkbox" checked={clarify} onChange={(event) => setClarify(event.target.checked)} />
          Ask me clarifying questions first if the question is ambiguous
        </label>
      )}
      <label className="inline">
        <input type="checkbox" checked={reviewOutline} onChange={(event) => setReviewOutline(event.target.checked)} />
        Let me review the outline before the report is written
      </label>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <button className="primary" type="submit" disabled={busy || !online || !question.trim()}>
        {busy ? 'Starting…' : 'Start research'}
      </button>
      <label className="import-file">
        Or import a session file (exported as JSON, here or by <code>quarry export --format json</code>)
        <input
          type="file"
          accept=".json,application/json"
          disabled={busy || !online}
          onChange={(event) => {
            const file = event.target.files?.[0];
            event.target.value = '';
            if (file) void importFile(file);
          }}
        />
      </label>
    </form>
  );
}
