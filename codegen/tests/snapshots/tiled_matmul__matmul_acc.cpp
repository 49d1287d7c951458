extern "C" void wsp_kernel_matmul_acc(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  uint16_t* const p_a = (uint16_t*)wsp_t[0]; const int64_t p_a_rs = wsp_s[0], p_a_cs = wsp_s[1];
  uint16_t* const p_b = (uint16_t*)wsp_t[1]; const int64_t p_b_rs = wsp_s[2], p_b_cs = wsp_s[3];
  float* const p_c = (float*)wsp_t[2]; const int64_t p_c_rs = wsp_s[4], p_c_cs = wsp_s[5];
  // %0 = load
  float v0[4096]; wsp::load<64, 64, wsp::Plain<float>>(v0, p_c, p_c_rs, p_c_cs);
  float v_a[4096]; wsp::load<64, 64, wsp::F16>(v_a, p_a, p_a_rs, p_a_cs);
  float v_b[4096]; wsp::load<64, 64, wsp::F16>(v_b, p_b, p_b_rs, p_b_cs);
  // %1 = matmul
  float v1[4096]; wsp::matmul<float, 64, 64, 64>(v_a, v_b, v0, v1);
  // %2 = store
  wsp::store<64, 64, wsp::Plain<float>>(p_c, p_c_rs, p_c_cs, v1);
}
