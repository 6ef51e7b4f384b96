// ui-qa run report: the page's own behaviour. It reads only what the page
// holds (embedded videos and replays) and reaches no network.
(function () {
  'use strict';

  // Embedded videos: base64 text in a text/plain script element becomes a
  // Blob URL (a giant data: URI on <video src> is slow and capped).
  function decode(b64) {
    var bin = atob(b64.replace(/\s+/g, ''));
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return bytes;
  }
  var videos = document.querySelectorAll('video[data-embedded]');
  Array.prototype.forEach.call(videos, function (v) {
    var src = document.getElementById(v.getAttribute('data-embedded'));
    if (!src) return;
    try {
      var blob = new Blob([decode(src.textContent)], { type: src.getAttribute('data-mime') || 'video/webm' });
      v.src = URL.createObjectURL(blob);
    } catch (e) {
      v.setAttribute('data-error', String(e));
    }
  });

  function seconds(t) {
    return (isFinite(t) ? t : 0).toFixed(1) + ' s';
  }

  // Play buttons and time labels.
  var controls = document.querySelectorAll('.player-controls[data-video]');
  Array.prototype.forEach.call(controls, function (box) {
    var v = document.getElementById(box.getAttribute('data-video'));
    if (!v) return;
    var play = box.querySelector('button.play');
    var time = box.querySelector('output');
    var duration = box.querySelector('.duration');
    play.addEventListener('click', function () {
      if (v.paused || v.ended) {
        var p = v.play();
        if (p && p.catch) p.catch(function (e) { play.setAttribute('data-error', String(e)); });
      } else {
        v.pause();
      }
    });
    v.addEventListener('play', function () { play.textContent = 'Pause'; });
    v.addEventListener('pause', function () { play.textContent = 'Play'; });
    v.addEventListener('ended', function () { play.textContent = 'Play'; });
    v.addEventListener('timeupdate', function () { time.value = seconds(v.currentTime); });
    v.addEventListener('seeked', function () { time.value = seconds(v.currentTime); });
    v.addEventListener('loadedmetadata', function () {
      if (isFinite(v.duration)) duration.textContent = ' / ' + seconds(v.duration);
    });
  });

  // Terminal replays (the vendored asciinema-player, inlined only when the
  // run has one): the recording is handed over as data, never fetched.
  var players = {};
  var replays = document.querySelectorAll('[data-replay]');
  Array.prototype.forEach.call(replays, function (el) {
    if (typeof AsciinemaPlayer === 'undefined') return;
    var data = document.getElementById(el.getAttribute('data-replay'));
    if (!data) return;
    try {
      var d = JSON.parse(data.textContent);
      players[el.id] = AsciinemaPlayer.create({ data: d.cast }, el, d.options);
    } catch (e) {
      el.setAttribute('data-error', String(e));
    }
  });

  // Step markers: a click seeks the video or replay to when the step began.
  var seeks = document.querySelectorAll('button[data-seek]');
  Array.prototype.forEach.call(seeks, function (b) {
    b.addEventListener('click', function () {
      var target = b.getAttribute('data-seek');
      var t = Number(b.getAttribute('data-seek-ms')) / 1000;
      var v = document.getElementById(target);
      if (v && v.tagName === 'VIDEO') {
        v.currentTime = t;
      } else if (players[target]) {
        players[target].seek(t);
      }
    });
  });
})();
