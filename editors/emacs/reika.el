;;; reika.el --- Reika's coding agent through eglot  -*- lexical-binding: t -*-

;; Author: The Reika authors
;; URL: https://github.com/reika-lsp/reika
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, languages, convenience

;; This file is not part of GNU Emacs.

;;; Commentary:

;; Reika is a language server, `reika-lsp', that runs a coding agent on
;; your own inference engine.  eglot alone runs it (code actions,
;; commands, edits); this package adds what eglot cannot do by itself:
;;
;;   M-x reika          ask the agent, about the region or the point
;;   M-x reika-plan     the same, read-only: the answer is a numbered plan
;;   M-x reika-cancel   stop the run under way
;;   M-x reika-status   the context chip, the model and the engine
;;   M-x reika-compact  fold the conversation now
;;   (and reika-save, reika-new-session, reika-resume, reika-show-recap)
;;
;; and, for the buffers of a Reika server only:
;;
;; - a careful workspace/applyEdit: eglot's pending changes are sent
;;   first, and an edit made for an older version of the buffer than
;;   the one it has now is refused (the server then places it again on
;;   your text), so that an edit never lands over typing eglot had not
;;   sent yet (eglot 1.17 would apply it there);
;; - every command (and eglot's code actions) sends eglot's pending
;;   changes first, so that the server acts on the text as you have it;
;; - the run's progress in the mode line ("Reika: round 3 · …"), on
;;   eglot 1.9 too (Emacs 28's jsonrpc leaves the messages that came with
;;   a command's answer unread until more arrive; the package reads them
;;   at once);
;; - the end of a run and the agent's answer in the buffer *reika*,
;;   shown when it does not fit the echo area.
;;
;; Install from the repository (Emacs 29 and later):
;;
;;   (package-vc-install
;;    '(reika :url "https://github.com/reika-lsp/reika" :lisp-dir "editors/emacs"))
;;
;; or from a clone: (use-package reika :load-path "…/editors/emacs" :after eglot).
;; The server itself is eglot's: an entry in `eglot-server-programs'
;; (see the README).  All the logic is in the server; this file is a
;; thin client.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'jsonrpc)
(require 'eglot)

(defgroup reika nil
  "Reika's coding agent through eglot."
  :group 'eglot
  :prefix "reika-")

(defcustom reika-answer-buffer-name "*reika*"
  "The buffer that holds the ends of Reika's runs and its answers."
  :type 'string)

;;;; Names

;; The names Reika adds to the protocol, mirrored from lsp/names.go: this
;; is the only place the package spells them, and editors/names_emacs_test.go
;; fails when the two drift apart.

(defconst reika-commands
  '((ask . "reika.ask")                 ; {instruction, uri?, range?}
    (compact . "reika.compact")
    (status . "reika.status")
    (cancel . "reika.cancel")
    (save . "reika.save")
    (new-session . "reika.newSession")
    (resume . "reika.resume")           ; {id?}
    (list-sessions . "reika.listSessions")
    (set-model . "reika.setModel")      ; {model?}
    (show-recap . "reika.showRecap")
    (undo-run . "reika.undoRun")
    ;; Answers to a proposal offered as code actions, for clients without
    ;; workspace/applyEdit; eglot has it, so the package never sends them.
    (apply-proposal . "reika.applyProposal")
    (apply-hunk . "reika.applyHunk")
    (reject-proposal . "reika.rejectProposal"))
  "The commands the server executes (workspace/executeCommand).")

(defconst reika-trust-plan "plan"
  "The trust of `reika-plan': a read-only run whose answer is a numbered plan.")

(defconst reika-server-name "reika-lsp"
  "The name the server gives in initialize's serverInfo.")

;;;; The server

(defun reika--server-p (server)
  "Whether SERVER, an eglot server, is a Reika server.
Before initialize has answered, the program eglot started says it."
  (and (cl-typep server 'eglot-lsp-server)
       (if-let ((info (eglot--server-info server)))
           (equal (plist-get info :name) reika-server-name)
         (let ((proc (ignore-errors (jsonrpc--process server))))
           (and (processp proc)
                (equal (file-name-nondirectory (or (car (process-command proc)) ""))
                       reika-server-name))))))

(defun reika--server ()
  "The Reika server of the current buffer, or a user error."
  (let ((server (eglot-current-server)))
    (unless (and server (reika--server-p server))
      (user-error "No Reika server for this buffer: M-x eglot first, with reika-lsp as the server"))
    server))

(defun reika--request (server method params)
  "Send SERVER the request METHOD with PARAMS and return its answer.
eglot's pending changes of every buffer SERVER manages go first, so
that the server knows the text as the user has it (eglot sends them
on an idle timer, `eglot-send-changes-idle-time' after the last change:
an undo of the run's edit, or the edit itself, may not have gone yet)."
  (reika--flush-all server)
  (jsonrpc-request server method params))

(defun reika--flush-all (server)
  "Send eglot's pending changes of every buffer SERVER manages."
  (dolist (buffer (eglot--managed-buffers server))
    (when (buffer-live-p buffer) (reika--flush buffer))))

(defun reika--read-parked (server)
  "Read the messages from SERVER that wait unread in its process buffer.
Emacs 28's jsonrpc (1.0.14) leaves its process filter by a `throw' when
it reads the answer to a request it waits for: the messages that came
in the same read stay unread until more data arrives.  One of them is
the create of the run's progress, whose answer the server awaits before
it reports any; unread, the mode line shows no round.  This is what the
next arrival would do; later jsonrpc versions have nothing left here."
  (let ((proc (ignore-errors (jsonrpc--process server))))
    (when (and (process-live-p proc) (buffer-live-p (process-buffer proc)))
      (jsonrpc--process-filter proc ""))))

(defun reika--around-request (request connection &rest args)
  "Make the REQUEST (`jsonrpc-request') to CONNECTION with ARGS.
To a Reika server, as the package's commands do, eglot's own requests
too (eglot 1.9 sends its code actions, which run Reika's commands,
without its pending changes): the pending changes go first, and the
messages that came with the answer are read after it."
  (if (not (reika--server-p connection))
      (apply request connection args)
    (reika--flush-all connection)
    (prog1 (apply request connection args)
      (reika--read-parked connection))))

(advice-add 'jsonrpc-request :around #'reika--around-request)

(defun reika--execute (key &optional arguments)
  "Run the command KEY of `reika-commands' with ARGUMENTS; return its result."
  (reika--request (reika--server) :workspace/executeCommand
                  (list :command (alist-get key reika-commands)
                        :arguments (or arguments []))))

;;;; Commands

;;;###autoload
(defun reika (instruction &optional beg end trust)
  "Ask Reika's agent to do INSTRUCTION, about this buffer's BEG..END.
Interactively, the region when it is active, else the point.  TRUST,
when given, is the run's mode (`reika-trust-plan').  Return the
server's answer, (:started t) or (:started :json-false :reason …)."
  (interactive (reika--ask-args "Reika, please: "))
  (let* ((server (reika--server))
         (beg (or beg (point)))
         (end (or end beg))
         (args (list :instruction instruction
                     :uri (plist-get (eglot--TextDocumentIdentifier) :uri)
                     :range (list :start (eglot--pos-to-lsp-position (min beg end))
                                  :end (eglot--pos-to-lsp-position (max beg end)))))
         (res (reika--request
               server :workspace/executeCommand
               (list :command (alist-get 'ask reika-commands)
                     :arguments (vector (if trust (append args (list :trust trust)) args))))))
    (when (use-region-p) (deactivate-mark))
    (when (and (called-interactively-p 'any) (not (eq (plist-get res :started) t)))
      (message "Reika did not start: %s" (plist-get res :reason)))
    res))

;;;###autoload
(defun reika-plan (instruction &optional beg end)
  "Ask Reika for a read-only plan of INSTRUCTION, about this buffer's BEG..END.
Reika reads, searches and runs only read-only commands; it edits
nothing, and its answer ends in a numbered plan.
Interactively, the region when it is active, else the point."
  (interactive (reika--ask-args "Reika, plan: "))
  (let ((res (reika instruction beg end reika-trust-plan)))
    (when (and (called-interactively-p 'any) (not (eq (plist-get res :started) t)))
      (message "Reika did not start: %s" (plist-get res :reason)))
    res))

(defun reika--ask-args (prompt)
  "The interactive arguments of `reika' and `reika-plan', read with PROMPT."
  (let ((region (use-region-p)))
    (list (read-string prompt)
          (if region (region-beginning) (point))
          (if region (region-end) (point)))))

;;;###autoload
(defun reika-cancel ()
  "Stop the run under way."
  (interactive)
  (let ((res (reika--execute 'cancel)))
    (when (called-interactively-p 'any)
      (message (if (eq (plist-get res :cancelled) t) "Reika: cancelled" "Reika: no run to cancel")))
    res))

;;;###autoload
(defun reika-status ()
  "Show the context chip, the model and the engine."
  (interactive)
  (let ((res (reika--execute 'status)))
    (when (called-interactively-p 'any)
      (message "Reika: %s · %s at %s%s" (plist-get res :chip) (plist-get res :model)
               (plist-get res :endpoint)
               (if (eq (plist-get res :running) t) " · a run is under way" "")))
    res))

;;;###autoload
(defun reika-undo-run ()
  "Revert the edits the last run applied, where the text since is unchanged."
  (interactive)
  (reika--execute 'undo-run))

;;;###autoload
(defun reika-compact ()
  "Fold the conversation now."
  (interactive)
  (let ((res (reika--execute 'compact)))
    (when (called-interactively-p 'any)
      (if (eq (plist-get res :compacted) t)
          (message "Reika: folded, %s → %s tokens" (plist-get res :before) (plist-get res :after))
        (message "Reika: nothing folded: %s" (plist-get res :reason))))
    res))

;;;###autoload
(defun reika-save ()
  "Write the transcript as Markdown (the server opens it)."
  (interactive)
  (reika--execute 'save))

;;;###autoload
(defun reika-new-session ()
  "Start a new session with the next request."
  (interactive)
  (reika--execute 'new-session))

;;;###autoload
(defun reika-resume ()
  "Continue this workspace's previous session."
  (interactive)
  (reika--execute 'resume))

;;;###autoload
(defun reika-show-recap ()
  "Open the recap to edit it; the edit replaces it on the next request."
  (interactive)
  (reika--execute 'show-recap))

;;;; What eglot advertises to a Reika server

;; eglot 1.9 advertises no progress and no showDocument; Reika's server
;; then sends neither.  The package handles both, for Reika's servers.
(cl-defmethod eglot-client-capabilities :around ((server eglot-lsp-server))
  (let ((caps (cl-call-next-method)))
    (if (not (reika--server-p server))
        caps
      (let ((window (copy-sequence (plist-get caps :window))))
        (setq window (plist-put window :workDoneProgress t))
        (setq window (plist-put window :showDocument '(:support t)))
        (plist-put (copy-sequence caps) :window window)))))

(cl-defmethod eglot-handle-request :around
  ((server eglot-lsp-server) (_method (eql window/workDoneProgress/create)) &rest _)
  "A Reika server's progress token: accepted (null is the answer)."
  (unless (reika--server-p server)
    (cl-call-next-method)))

;;;; A careful workspace/applyEdit

(defun reika--uri-to-path (uri)
  "The file name of URI, as eglot spells it."
  (if (fboundp 'eglot-uri-to-path)
      (eglot-uri-to-path uri)
    (with-suppressed-warnings ((obsolete eglot--uri-to-path))
      (eglot--uri-to-path uri))))

(defun reika--flush (buffer)
  "Send eglot's pending changes of BUFFER to its server now.
eglot sends a didChange after an idle time; until then the server
does not know the user's latest text (and eglot 1.17 does not count
its version either).  This is what eglot's idle timer calls."
  (with-current-buffer buffer
    (when (bound-and-true-p eglot--managed-mode)
      (eglot--signal-textDocument/didChange))))

(defun reika--stale (edit)
  "Why the WorkspaceEdit EDIT does not fit the buffers as they are now.
Nil when it fits.  Every buffer it edits has its pending changes sent
first; a TextDocumentEdit whose version is not the buffer's version
now was made for text the user has changed since."
  (let ((docs (cl-loop for change in (append (plist-get edit :documentChanges) nil)
                       for doc = (plist-get change :textDocument)
                       for buffer = (and doc (not (plist-get change :kind))
                                         (find-buffer-visiting (reika--uri-to-path (plist-get doc :uri))))
                       when buffer collect (cons buffer (plist-get doc :version)))))
    (dolist (d docs) (reika--flush (car d)))
    (cl-loop for (buffer . version) in docs
             for now = (buffer-local-value 'eglot--versioned-identifier buffer)
             when (and (integerp version) (/= version now))
             return (format "the document changed since (version %d, now %d)" version now))))

(cl-defmethod eglot-handle-request :around
  ((server eglot-lsp-server) (_method (eql workspace/applyEdit)) &rest params)
  "Refuse an edit of a Reika server made for an older buffer; else as eglot does."
  (let ((why (and (reika--server-p server) (reika--stale (plist-get params :edit)))))
    (if why
        (list :applied :json-false :failureReason why)
      (cl-call-next-method))))

;;;; Progress in the mode line

(defvar reika-mode-line-string nil
  "What the run under way does, for the mode line (nil when none runs).")
(put 'reika-mode-line-string 'risky-local-variable t)

(defun reika--mode-line (text)
  "Show TEXT (nil: nothing) in the mode line."
  (unless (memq 'reika-mode-line-string global-mode-string)
    (setq global-mode-string (append (or global-mode-string '("")) '(reika-mode-line-string))))
  (setq reika-mode-line-string (and text (concat " " text)))
  (force-mode-line-update t))

(cl-defmethod eglot-handle-notification
  ((server eglot-lsp-server) (_method (eql $/progress)) &rest params)
  "A Reika server's progress goes to the mode line; others' to eglot."
  (if (not (reika--server-p server))
      (cl-call-next-method)
    (let* ((value (plist-get params :value))
           (message (or (plist-get value :message) (plist-get value :title))))
      (pcase (plist-get value :kind)
        ("begin" (reika--mode-line (format "Reika: %s" (or message "working"))))
        ("report" (when message (reika--mode-line (format "Reika: %s" message))))
        ("end" (reika--mode-line nil))))))

;;;; The end of a run and the answer

(defconst reika--end-of-run-regexp "\\`Reika\\(?::\\| stopped\\b\\| finished:\\)"
  "How the server's message at the end of a run begins.")

(defun reika--answer-buffer ()
  (let ((buffer (get-buffer-create reika-answer-buffer-name)))
    (with-current-buffer buffer
      (unless (derived-mode-p 'special-mode) (special-mode)))
    buffer))

(defun reika--answer (text &optional new)
  "Append TEXT to the answer buffer, under a new heading when NEW; return it."
  (with-current-buffer (reika--answer-buffer)
    (let ((inhibit-read-only t))
      (goto-char (point-max))
      (when (and new (> (point-max) (point-min)))
        (insert "\n"))
      (when new
        (insert (propertize (format-time-string "── %F %T ──\n") 'face 'shadow)))
      (insert text)
      (unless (string-suffix-p "\n" text) (insert "\n")))
    (current-buffer)))

(defun reika--show-answer (buffer)
  "Show BUFFER without selecting it, at its latest run."
  (let ((window (display-buffer buffer)))
    (when window
      (with-selected-window window
        (goto-char (point-max))
        (when (re-search-backward "^── " nil t) (set-window-start window (point)))))))

(defun reika--fits-echo-area (text)
  (and (not (string-search "\n" text))
       (< (string-width text) (window-width (minibuffer-window)))))

(cl-defmethod eglot-handle-notification
  ((server eglot-lsp-server) (_method (eql window/showMessage)) &rest params)
  "The end of a Reika run goes to *reika* too, shown when it is long."
  (let ((message (plist-get params :message)))
    (if (not (and (reika--server-p server) (stringp message)
                  (string-match-p reika--end-of-run-regexp message)))
        (cl-call-next-method)
      (let ((buffer (reika--answer message t)))
        (if (reika--fits-echo-area message)
            (message "%s" message)
          (reika--show-answer buffer)
          (message "%s" (truncate-string-to-width
                         (car (split-string message "\n"))
                         (max 10 (1- (window-width (minibuffer-window)))) nil nil "…")))))))

(cl-defmethod eglot-handle-notification
  ((server eglot-lsp-server) (_method (eql window/logMessage)) &rest params)
  "A Reika answer of several lines goes to *reika*.
The server logs it after the one-line end of its run."
  (let ((message (plist-get params :message)))
    (if (and (reika--server-p server) (stringp message)
             (string-prefix-p "Reika's answer:\n" message))
        (reika--show-answer (reika--answer (concat "\n" (substring message (length "Reika's answer:\n")))))
      (cl-call-next-method))))

(cl-defmethod eglot-handle-request
  ((server eglot-lsp-server) (_method (eql window/showDocument)) &rest params)
  "A Reika answer the server opens as a document goes to *reika*; other
documents open in a window (eglot 1.9 has no showDocument)."
  (if (not (reika--server-p server))
      (cl-call-next-method)
    (let ((path (reika--uri-to-path (plist-get params :uri))))
      (cond
       ((not (file-readable-p path)) (list :success :json-false))
       ((string-match-p "\\`answer-[0-9-]+\\.md\\'" (file-name-nondirectory path))
        (reika--show-answer
         (reika--answer (concat "\n" (with-temp-buffer (insert-file-contents path) (buffer-string)))))
        (list :success t))
       (t
        (let ((focus (eq (plist-get params :takeFocus) t)))
          ;; After the answer, as eglot 1.17 does: opening a file may
          ;; send requests of its own.
          (run-with-timer 0 nil (lambda ()
                                  (let ((buffer (find-file-noselect path)))
                                    (if focus (pop-to-buffer buffer) (display-buffer buffer))))))
        (list :success t))))))

;; Loaded with eglot, so that a Reika server's first edit already meets
;; the careful handler (the form is only in the autoloads file).
;;;###autoload (with-eval-after-load 'eglot (require 'reika))

(provide 'reika)
;;; reika.el ends here
