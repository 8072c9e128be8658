;;; jsonrpc-el-test.el --- Emacs's own jsonrpc.el against the storefront server  -*- lexical-binding: t -*-

;; Drives `storefront serve' with the jsonrpc.el that ships with Emacs, as Eglot does: a
;; `jsonrpc-process-connection' over a pipe process, Content-Length framing, `jsonrpc-request' for
;; requests and `jsonrpc-notify' for notifications.  jsonrpc.el sends `"params": null' for a nil
;; PARAMS, which is what this suite is about.
;;
;; Run (test_jsonrpc_el.py does):
;;   STOREFRONT_BIN=path/to/storefront emacs --batch -Q -l ert -l jsonrpc-el-test.el \
;;     -f ert-run-tests-batch-and-exit
;;
;; jsonrpc.el is used unmodified.  The test only watches the wire: a `:before' function on the
;; process filter sees the bytes that arrive, a `:before' advice on `process-send-string' the bytes
;; that leave, so it can check the JSON itself (jsonrpc.el reads both `{}' and `null' as nil).

(require 'cl-lib)
(require 'ert)
(require 'jsonrpc)

(defconst storefront-test-timeout 30
  "Seconds any wait may last before the test fails.
A guard against a hang, never a way to synchronise.")

(defun storefront-test--wait-for (what process predicate)
  "Read PROCESS's output until PREDICATE holds.
Fail naming WHAT after `storefront-test-timeout' seconds.  Waiting on
PROCESS itself returns as soon as it writes or closes its output (its
end runs its sentinel)."
  (let ((deadline (+ (float-time) storefront-test-timeout)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (ert-fail (format "no %s within %d s" what storefront-test-timeout)))
      (accept-process-output (and (process-live-p process) process) 1))))

(defun storefront-test--frames (chunks)
  "The messages in CHUNKS, strings of Content-Length frames in order.
Each is parsed so that `{}' is an empty hash table and `null' is
:null.  Lengths count UTF-8 bytes, as the header does."
  (let ((bytes (encode-coding-string (apply #'concat chunks) 'utf-8-unix))
        (start 0)
        frames)
    (while (string-match "Content-Length: *\\([0-9]+\\)\r\n\\(?:[^\r\n]+\r\n\\)*\r\n" bytes start)
      (let* ((body-start (match-end 0))
             (body-end (+ body-start (string-to-number (match-string 1 bytes)))))
        (push (json-parse-string (decode-coding-string (substring bytes body-start body-end) 'utf-8)
                                 :null-object :null)
              frames)
        (setq start body-end)))
    (nreverse frames)))

(defun storefront-test--find (frames key value)
  "The first of FRAMES whose KEY is VALUE."
  (cl-find-if (lambda (frame) (equal (gethash key frame) value)) frames))

(ert-deftest storefront-jsonrpc-el-session ()
  "A session as Eglot would hold it; the server exits 0.
initialize, open a cart, add to it (its change arrives before the
answer), then ping, shutdown and exit with nil params."
  (let* ((binary (or (getenv "STOREFRONT_BIN") (error "Set STOREFRONT_BIN to the storefront binary")))
         (name "storefront-interop")
         (events '())             ; (changed HANDLE VERSION) and (answer METHOD), newest first
         (received '())           ; strings the process filter got, newest first
         (sent '())               ; strings written to the server, newest first
         (exit-status nil)
         (process (make-process :name name
                                :command (list binary "serve" "--database" ":memory:")
                                :connection-type 'pipe
                                :coding 'utf-8-emacs-unix
                                :noquery t
                                ;; jsonrpc.el expects exactly this stderr buffer name.
                                :stderr (get-buffer-create (format "*%s stderr*" name))))
         (watch-sent (lambda (target string)
                       (when (eq target process) (push string sent)))))
    (advice-add 'process-send-string :before watch-sent)
    (unwind-protect
        (let ((conn (make-instance
                     'jsonrpc-process-connection
                     :name name
                     :process process
                     :notification-dispatcher
                     (lambda (_conn method params)
                       (when (eq method 'viewModel/changed)
                         (push (list 'changed (plist-get params :viewModel) (plist-get params :version))
                               events)))
                     :on-shutdown
                     (lambda (_conn) (setq exit-status (process-exit-status process))))))
          ;; After jsonrpc.el has set its filter: ours runs first, then jsonrpc.el's.
          (add-function :before (process-filter process) (lambda (_process string) (push string received)))

          (let ((initialized (jsonrpc-request conn :initialize '(:clientInfo (:name "jsonrpc.el"))
                                              :timeout storefront-test-timeout)))
            (should (equal (plist-get (plist-get initialized :serverInfo) :name) "storefront"))
            (should (stringp (plist-get initialized :protocolVersion))))

          (let* ((opened (jsonrpc-request conn :viewModel/open '(:type "cart")
                                          :timeout storefront-test-timeout))
                 (handle (plist-get opened :viewModel))
                 (answer nil))
            (should (stringp handle))
            ;; The answer's callback runs when jsonrpc.el reads it, as the dispatcher does for notifications.
            (jsonrpc-async-request conn :cart/add `(:viewModel ,handle :productId "p-0001" :quantity 1)
                                   :success-fn (lambda (result)
                                                 (push '(answer cart/add) events)
                                                 (setq answer result))
                                   :error-fn (lambda (error) (setq answer (list :error error)))
                                   :timeout storefront-test-timeout
                                   :timeout-fn (lambda () (setq answer :timed-out)))
            (storefront-test--wait-for "answer to cart/add" process (lambda () answer))
            (let* ((version (or (plist-get answer :version) (ert-fail (format "cart/add: %S" answer))))
                   (in-order (reverse events))
                   (change (list 'changed handle version)))
              (should (member change in-order))
              (should (< (cl-position change in-order :test #'equal)
                         (cl-position '(answer cart/add) in-order :test #'equal)))))

          ;; `{}' and `null' both read as nil: the wire is checked below.
          (should (null (jsonrpc-request conn :ping nil :timeout storefront-test-timeout)))
          (should (null (jsonrpc-request conn :shutdown nil :timeout storefront-test-timeout)))
          (jsonrpc-notify conn :exit nil)
          (storefront-test--wait-for "exit of the server" process (lambda () exit-status))
          (should (eq (process-status process) 'exit))
          (should (equal exit-status 0))

          (let* ((out (storefront-test--frames (reverse sent)))
                 (in (storefront-test--frames (reverse received)))
                 (ping (storefront-test--find out "method" "ping")))
            (dolist (method '("ping" "shutdown" "exit"))
              (let ((message (storefront-test--find out "method" method)))
                (should (eq (gethash "params" message 'absent) :null))))
            (let ((pong (storefront-test--find in "id" (gethash "id" ping))))
              (should (hash-table-p (gethash "result" pong)))
              (should (zerop (hash-table-count (gethash "result" pong)))))
            (let ((shutdown (storefront-test--find out "method" "shutdown")))
              (should (eq (gethash "result" (storefront-test--find in "id" (gethash "id" shutdown)))
                          :null)))))
      (advice-remove 'process-send-string watch-sent)
      (when (process-live-p process)
        (delete-process process)))))

;;; jsonrpc-el-test.el ends here
