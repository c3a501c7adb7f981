// Rust or Go, the reader's choice. In the chapters, a listing's Go twin sits
// right after the Rust block it mirrors, as
//
//     <div class="twin" data-lang="go"><p class="twin-label">…</p><pre>…</pre></div>
//
// (chapter 9, which leads with Go, has data-lang="rust" after a Go block).
// Without this script, and on paper (the PDF, the EPUB), both blocks show,
// one after the other. With it, each pair becomes two tabs, "Rust" and "Go",
// and one choice holds for the whole book: picking Go on one listing shows
// Go on every listing, on every page, and on the next visit (localStorage).
// Rust is the default until the reader answers the question a first visit
// asks at the top of a page with code or commands in both languages. The
// same choice picks the command of every "Run it with" line (the `{{#run}}`
// directive's spans). Which panel or command shows is a CSS matter under
// `@media screen` (theme/tabs.css), so printing a page prints both.
(function () {
    'use strict';

    var KEY = 'forget-is-not-delete.language';
    var LANGUAGES = ['rust', 'go'];
    var NAMES = { rust: 'Rust', go: 'Go' };
    var DEFAULT = 'rust';

    // The reader's choice, or null before they made one.
    function chosen() {
        try {
            var value = window.localStorage.getItem(KEY);
            return LANGUAGES.indexOf(value) >= 0 ? value : null;
        } catch (e) {
            return null; // storage disabled: the default, every time
        }
    }

    function stored() {
        return chosen() || DEFAULT;
    }

    function store(language) {
        try {
            window.localStorage.setItem(KEY, language);
        } catch (e) {
            // Storage disabled: the choice lasts until the page changes.
        }
    }

    // The language of a code block, from the class highlight.js and mdBook
    // give it (`language-rust`, `language-go`).
    function languageOf(pre) {
        var code = pre && pre.tagName === 'PRE' ? pre.querySelector('code') : null;
        if (!code) return null;
        for (var i = 0; i < LANGUAGES.length; i++) {
            if (code.classList.contains('language-' + LANGUAGES[i])) return LANGUAGES[i];
        }
        return null;
    }

    var groups = [];

    // Turns one twin and the block before it into a tab group. A twin with
    // no block of the other language right before it is left as it is, both
    // visible (the browser test reports it).
    function build(twin, n) {
        var lang = twin.getAttribute('data-lang');
        var other = lang === 'go' ? 'rust' : lang === 'rust' ? 'go' : null;
        var before = twin.previousElementSibling;
        if (!other || languageOf(before) !== other) return;

        var group = document.createElement('div');
        group.className = 'lang-tabs';
        twin.parentNode.insertBefore(group, before);

        var list = document.createElement('div');
        list.className = 'lang-tablist';
        list.setAttribute('role', 'tablist');
        list.setAttribute('aria-label', 'Language of this listing');
        group.appendChild(list);

        // The block before the twin has no wrapper of its own in the page.
        var first = document.createElement('div');
        first.appendChild(before);
        var panels = {};
        panels[other] = first;
        panels[lang] = twin;

        var tabs = {};
        LANGUAGES.forEach(function (language) {
            var id = 'lang-' + n + '-' + language;
            var tab = document.createElement('button');
            tab.type = 'button';
            tab.className = 'lang-tab';
            tab.id = id + '-tab';
            tab.setAttribute('role', 'tab');
            tab.setAttribute('aria-controls', id);
            tab.setAttribute('data-lang', language);
            tab.textContent = NAMES[language];
            list.appendChild(tab);
            tabs[language] = tab;

            var panel = panels[language];
            panel.id = id;
            panel.classList.add('lang-panel');
            panel.setAttribute('data-panel', language);
            panel.setAttribute('role', 'tabpanel');
            panel.setAttribute('aria-labelledby', tab.id);
            // The code inside is not focusable, so the panel is (WAI-ARIA's
            // tabs pattern: Tab moves from the tab list into the panel).
            panel.tabIndex = 0;
        });
        // The panels in the page's order, so that printing keeps it.
        group.appendChild(first);
        group.appendChild(twin);

        list.addEventListener('click', function (event) {
            var tab = event.target.closest('[role="tab"]');
            if (tab) choose(tab.getAttribute('data-lang'), tab);
        });
        list.addEventListener('keydown', function (event) {
            var at = LANGUAGES.indexOf(event.target.getAttribute('data-lang'));
            var to = null;
            if (event.key === 'ArrowRight') to = (at + 1) % LANGUAGES.length;
            else if (event.key === 'ArrowLeft') to = (at + LANGUAGES.length - 1) % LANGUAGES.length;
            else if (event.key === 'Home') to = 0;
            else if (event.key === 'End') to = LANGUAGES.length - 1;
            if (to === null) return;
            // mdBook turns the page on ArrowLeft and ArrowRight (a listener
            // on the document); on a tab they move between the tabs instead.
            event.preventDefault();
            event.stopPropagation();
            var tab = tabs[LANGUAGES[to]];
            choose(LANGUAGES[to], tab);
            tab.focus();
        });
        groups.push({ group: group, tabs: tabs });
    }

    function show(language) {
        document.documentElement.setAttribute('data-language', language);
        groups.forEach(function (g) {
            g.group.setAttribute('data-show', language);
            LANGUAGES.forEach(function (l) {
                var selected = l === language;
                g.tabs[l].setAttribute('aria-selected', selected ? 'true' : 'false');
                g.tabs[l].tabIndex = selected ? 0 : -1;
            });
        });
    }

    // Every group above the clicked one changes height too, and the
    // question goes; the tab the reader clicked stays where it was on the
    // screen.
    function choose(language, tab) {
        if (LANGUAGES.indexOf(language) < 0) return;
        var top = tab ? tab.getBoundingClientRect().top : 0;
        show(language);
        store(language);
        unask();
        if (tab) window.scrollBy(0, tab.getBoundingClientRect().top - top);
    }

    var question = null;

    // Asked once, on the first page that has something to choose, and on
    // every such page until answered (a tab's click answers it too). Not
    // modal: the book reads in Rust until the reader says otherwise.
    function ask(main) {
        question = document.createElement('div');
        question.className = 'language-question';
        question.setAttribute('role', 'group');
        question.setAttribute('aria-label', 'Your language');
        var text = document.createElement('p');
        text.textContent = 'Which language do you write controllers in? Wherever a listing has a Go ' +
            'twin, the book shows its code, and the command that runs it, in that language. ' +
            'The tabs above any listing change it later.';
        question.appendChild(text);
        ['go', 'rust'].forEach(function (language) {
            var button = document.createElement('button');
            button.type = 'button';
            button.setAttribute('data-lang', language);
            button.textContent = NAMES[language];
            button.addEventListener('click', function () { choose(language, null); });
            question.appendChild(button);
        });
        main.insertBefore(question, main.firstChild);
    }

    function unask() {
        if (question && question.parentNode) question.parentNode.removeChild(question);
        question = null;
    }

    var twins = document.querySelectorAll('main div.twin[data-lang]');
    for (var i = 0; i < twins.length; i++) build(twins[i], i + 1);
    show(stored());
    var main = document.querySelector('main');
    if (main && chosen() === null && main.querySelector('.lang-tabs, .run-line')) ask(main);

    // A choice made in another window of the book applies here too.
    window.addEventListener('storage', function (event) {
        if (event.key !== KEY) return;
        show(stored());
        if (chosen() !== null) unask();
    });
})();
