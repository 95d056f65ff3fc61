// mp4_writer.cpp: libx264rgb qp 0 + filter_units(remove SEI) + mp4 muxer, every flag pinned for reproducibility.
#include "mp4_writer.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
}

#include <cstring>
#include <memory>
#include <stdexcept>

#include "common/atomic_file.h"

namespace fuseproof::e2e {
namespace {

constexpr const char* kEncoder = "libx264rgb";

std::string av_error(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(err, buf, sizeof(buf));
  return buf;
}

struct Writer {
  std::string path;
  AVFormatContext* oc = nullptr;
  AVCodecContext* enc = nullptr;
  AVBSFContext* bsf = nullptr;
  AVStream* stream = nullptr;
  AVPacket* pkt = av_packet_alloc();
  bool opened_io = false;

  ~Writer() {
    av_packet_free(&pkt);
    av_bsf_free(&bsf);
    avcodec_free_context(&enc);
    if (oc && opened_io) avio_closep(&oc->pb);
    avformat_free_context(oc);
  }

  void check(int err, const char* what) const {
    if (err < 0) throw std::runtime_error("mp4 '" + path + "': " + what + ": " + av_error(err));
  }

  // Encoder -> bitstream filter -> muxer; a null frame / packet flushes each stage.
  void drain_encoder(const AVFrame* frame) {
    check(avcodec_send_frame(enc, frame), "avcodec_send_frame");
    for (;;) {
      const int err = avcodec_receive_packet(enc, pkt);
      if (err == AVERROR(EAGAIN)) return;
      if (err == AVERROR_EOF) break;
      check(err, "avcodec_receive_packet");
      check(av_bsf_send_packet(bsf, pkt), "av_bsf_send_packet");
      drain_bsf();
    }
    check(av_bsf_send_packet(bsf, nullptr), "av_bsf_send_packet(flush)");
    drain_bsf();
  }

  void drain_bsf() {
    for (;;) {
      const int err = av_bsf_receive_packet(bsf, pkt);
      if (err == AVERROR(EAGAIN) || err == AVERROR_EOF) return;
      check(err, "av_bsf_receive_packet");
      // Every frame lasts one tick; without it the muxer's edit list would cut the last frame.
      if (pkt->duration == 0) pkt->duration = 1;
      av_packet_rescale_ts(pkt, enc->time_base, stream->time_base);
      pkt->stream_index = stream->index;
      check(av_interleaved_write_frame(oc, pkt), "av_interleaved_write_frame");
    }
  }
};

}  // namespace

std::string mp4_encoder_identity() {
  return std::string("FFmpeg ") + av_version_info() + " (" LIBAVCODEC_IDENT ", " LIBAVFORMAT_IDENT ") " + kEncoder +
         " qp=0 preset=medium threads=1 bitexact, SEI removed";
}

std::string write_mp4(const std::string& path, const VideoFrames& frames, int fps) {
  av_log_set_level(AV_LOG_QUIET);
  if (frames.count < 1 || frames.width < 1 || frames.height < 1) {
    throw std::runtime_error("mp4 '" + path + "': frames must be non-empty, got " + std::to_string(frames.count));
  }
  Writer w;
  w.path = path;
  const AVCodec* codec = avcodec_find_encoder_by_name(kEncoder);
  if (!codec) throw std::runtime_error(std::string("mp4: encoder ") + kEncoder + " is not in this FFmpeg build");
  w.check(avformat_alloc_output_context2(&w.oc, nullptr, "mp4", path.c_str()), "avformat_alloc_output_context2");
  w.oc->flags |= AVFMT_FLAG_BITEXACT;
  w.stream = avformat_new_stream(w.oc, nullptr);
  w.enc = avcodec_alloc_context3(codec);
  if (!w.stream || !w.enc || !w.pkt) throw std::runtime_error("mp4 '" + path + "': out of memory");
  w.enc->width = frames.width;
  w.enc->height = frames.height;
  w.enc->pix_fmt = AV_PIX_FMT_RGB24;
  w.enc->time_base = AVRational{1, fps};
  w.enc->framerate = AVRational{fps, 1};
  w.enc->thread_count = 1;
  w.enc->flags |= AV_CODEC_FLAG_BITEXACT;
  if (w.oc->oformat->flags & AVFMT_GLOBALHEADER) w.enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  AVDictionary* opts = nullptr;
  av_dict_set(&opts, "qp", "0", 0);
  av_dict_set(&opts, "preset", "medium", 0);
  const int open_err = avcodec_open2(w.enc, codec, &opts);
  av_dict_free(&opts);
  w.check(open_err, "avcodec_open2");
  w.check(avcodec_parameters_from_context(w.stream->codecpar, w.enc), "avcodec_parameters_from_context");
  w.stream->time_base = w.enc->time_base;

  const AVBitStreamFilter* filter = av_bsf_get_by_name("filter_units");
  if (!filter) throw std::runtime_error("mp4: bitstream filter filter_units is not in this FFmpeg build");
  w.check(av_bsf_alloc(filter, &w.bsf), "av_bsf_alloc");
  w.check(av_opt_set(w.bsf->priv_data, "remove_types", "6", 0), "filter_units remove_types");  // 6 = SEI
  w.check(avcodec_parameters_copy(w.bsf->par_in, w.stream->codecpar), "avcodec_parameters_copy");
  w.bsf->time_base_in = w.enc->time_base;
  w.check(av_bsf_init(w.bsf), "av_bsf_init");
  w.check(avcodec_parameters_copy(w.stream->codecpar, w.bsf->par_out), "avcodec_parameters_copy");

  AtomicFile file(path);  // libavformat writes the temporary file; commit() renames it over `path`
  w.check(avio_open(&w.oc->pb, file.temp_path().c_str(), AVIO_FLAG_WRITE), "avio_open");
  w.opened_io = true;
  w.check(avformat_write_header(w.oc, nullptr), "avformat_write_header");

  std::unique_ptr<AVFrame, void (*)(AVFrame*)> frame(av_frame_alloc(), [](AVFrame* f) { av_frame_free(&f); });
  frame->format = AV_PIX_FMT_RGB24;
  frame->width = frames.width;
  frame->height = frames.height;
  w.check(av_frame_get_buffer(frame.get(), 0), "av_frame_get_buffer");
  const size_t row = static_cast<size_t>(frames.width) * 3;
  for (int i = 0; i < frames.count; ++i) {
    w.check(av_frame_make_writable(frame.get()), "av_frame_make_writable");
    for (int y = 0; y < frames.height; ++y) {
      std::memcpy(frame->data[0] + static_cast<ptrdiff_t>(y) * frame->linesize[0], frames.frame(i) + row * y, row);
    }
    frame->pts = i;
    // Encode and write as we go; the flush at the end drains the encoder's lookahead.
    w.check(avcodec_send_frame(w.enc, frame.get()), "avcodec_send_frame");
    for (;;) {
      const int err = avcodec_receive_packet(w.enc, w.pkt);
      if (err == AVERROR(EAGAIN)) break;
      w.check(err, "avcodec_receive_packet");
      w.check(av_bsf_send_packet(w.bsf, w.pkt), "av_bsf_send_packet");
      w.drain_bsf();
    }
  }
  w.drain_encoder(nullptr);
  w.check(av_write_trailer(w.oc), "av_write_trailer");
  w.check(avio_closep(&w.oc->pb), "avio_closep");
  w.opened_io = false;
  file.commit();
  return mp4_encoder_identity();
}

}  // namespace fuseproof::e2e
