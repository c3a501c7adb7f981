// Hidden lines at their true indentation. `cargo xtask dedent-preprocessor`
// starts a fragment shown from inside a function at column 0, leaves the
// hidden lines (the rest of the file, behind the eye icon) as the file has
// them, and marks the block `dedent-N`, N the columns it took from the shown
// lines. When the eye icon reveals the hidden lines (mdBook's book.js takes
// the class `hide-boring` off the block), this gives every shown line its N
// columns back, so that the whole program reads as it is written; when the
// lines are hidden again, it takes them away.
(function () {
    'use strict';

    // Every place a shown (not hidden) line starts: [text node, offset].
    function lineStarts(code) {
        const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
        const starts = [];
        let previous = '\n';
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const text = node.data;
            if (!node.parentElement.closest('.boring, .reindent')) {
                for (let i = 0; i < text.length; i++) {
                    const before = i === 0 ? previous : text[i - 1];
                    if (before === '\n' && text[i] !== '\n') {
                        starts.push([node, i]);
                    }
                }
            }
            if (text.length) {
                previous = text[text.length - 1];
            }
        }
        return starts;
    }

    function indent(code, columns) {
        const starts = lineStarts(code);
        // From the last, so that the offsets before it still hold.
        for (let k = starts.length - 1; k >= 0; k--) {
            const [node, offset] = starts[k];
            const pad = document.createElement('span');
            pad.className = 'reindent';
            pad.textContent = ' '.repeat(columns);
            const at = offset === 0 ? node : node.splitText(offset);
            at.parentNode.insertBefore(pad, at);
        }
    }

    function unindent(code) {
        code.querySelectorAll('span.reindent').forEach(pad => pad.remove());
        code.normalize();
    }

    document.querySelectorAll('pre code[class*="dedent-"]').forEach(code => {
        const match = /(?:^|\s)dedent-(\d+)(?:\s|$)/.exec(code.className);
        if (!match) {
            return;
        }
        const columns = Number(match[1]);
        let indented = false;
        const sync = () => {
            const revealed = !code.classList.contains('hide-boring') && code.querySelector('.boring');
            if (revealed && !indented) {
                indent(code, columns);
                indented = true;
            } else if (!revealed && indented) {
                unindent(code);
                indented = false;
            }
        };
        new MutationObserver(sync).observe(code, { attributes: true, attributeFilter: ['class'] });
    });
})();
