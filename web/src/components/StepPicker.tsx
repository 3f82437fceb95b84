import { useEffect, useRef, useState } from 'react';
import { researchPhases } from '../../../src/research/step-keys.ts';
import { api, type Step } from '../api-client.ts';

/**
 * Choose where to resume or fork from, from the session's own journal: its current run's phases
 * (resume from the start of a phase) and steps (from one step), with their status. A modal dialog.
 */
export function StepPicker({
  sessionId,
  action,
  onChoose,
  onClose,
}: {
  sessionId: string;
  action: 'resume' | 'fork';
  onChoose: (from: string) => void;
  onClose: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [steps, setSteps] = useState<Step[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  // A phase and a step can share a name (the write phase's step is `write`): each radio is its own choice.
  const [chosen, setChosen] = useState<{ choice: string; from: string } | null>(null);

  useEffect(() => {
    dialog.current?.showModal();
    api.steps(sessionId).then(
      ({ steps: all }) => {
        // The current run's live journal: the last run's steps, rewound ones left out.
        const runId = all.at(-1)?.runId;
        setSteps(all.filter((step) => step.runId === runId && step.status !== 'superseded'));
      },
      (caught: Error) => setError(caught.message),
    );
  }, [sessionId]);

  const phases = steps ? researchPhases.filter((phase) => steps.some((step) => step.phase === phase)) : [];
  const verb = action === 'resume' ? 'Resume from' : 'Fork from';
  return (
    <dialog ref={dialog} className="picker" aria-label={verb} onClose={onClose}>
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          if (chosen) onChoose(chosen.from);
        }}
      >
        <h2>{verb}…</h2>
        <p className="muted small">
          {action === 'resume'
            ? 'Steps from the chosen point on run again; everything before is kept. The session keeps its id.'
            : 'A new session gets the journal before the chosen point and continues from there; this one is not changed.'}
        </p>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        {!steps && !error && <p className="muted">Loading the journal…</p>}
        {steps && steps.length === 0 && <p className="muted">This session has no steps yet.</p>}
        {steps && steps.length > 0 && (
          <fieldset>
            <legend>Phases</legend>
            {phases.map((phase) => (
              <label key={phase} className="inline">
                <input
                  type="radio"
                  name="from"
                  value={`phase:${phase}`}
                  checked={chosen?.choice === `phase:${phase}`}
                  onChange={() => setChosen({ choice: `phase:${phase}`, from: phase })}
                />
                the start of {phase}
              </label>
            ))}
          </fieldset>
        )}
        {steps && steps.length > 0 && (
          <fieldset className="steps">
            <legend>Steps</legend>
            {steps.map((step) => (
              <label key={step.key} className="inline step-choice">
                <input
                  type="radio"
                  name="from"
                  value={`step:${step.key}`}
                  checked={chosen?.choice === `step:${step.key}`}
                  onChange={() => setChosen({ choice: `step:${step.key}`, from: step.key })}
                />
                <span className="key">{step.key}</span> <span className={`badge ${step.status}`}>{step.status}</span>
              </label>
            ))}
          </fieldset>
        )}
        <div className="actions">
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={!chosen}>
            {verb} {chosen?.from ?? '…'}
          </button>
        </div>
      </form>
    </dialog>
  );
}
